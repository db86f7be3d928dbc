package store_test

import (
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// A set_settings change that names the generation its writer read is
// refused once someone else saved, even when it would change nothing; the
// current generation applies, audited.
func TestApplySettingsGeneration(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		gen := func(g int64) *int64 { return &g }
		on := true
		set := scheduling.Change{Op: scheduling.OpSetSettings, Generation: gen(0),
			Settings: &scheduling.SettingsOverride{LimitTenantsToPlacementAggregate: &on}}
		if _, err := s.Apply(ctx, admin, []scheduling.Change{set}); err != nil {
			t.Fatal(err)
		}
		st, g, _ := s.GetSettings(ctx)
		if g != 1 || !st.LimitTenantsToPlacementAggregate {
			t.Fatalf("after apply: %+v gen %d", st, g)
		}
		// The same form again, read at generation 0: stale.
		_, err := s.Apply(ctx, admin, []scheduling.Change{set})
		wantKind(t, err, models.Conflict, "generation")
		empty := scheduling.Change{Op: scheduling.OpSetSettings, Generation: gen(0), Settings: &scheduling.SettingsOverride{}}
		_, err = s.Apply(ctx, admin, []scheduling.Change{empty})
		wantKind(t, err, models.Conflict, "generation")
		// Read at generation 1: nothing to change, nothing written.
		empty.Generation = gen(1)
		if a, err := s.Apply(ctx, admin, []scheduling.Change{empty}); err != nil || a.Revision != 0 {
			t.Fatalf("unchanged settings: %+v %v", a, err)
		}
		// A bad value is refused naming the setting.
		neg := -1.0
		_, err = s.Apply(ctx, admin, []scheduling.Change{{Op: scheduling.OpSetSettings, Generation: gen(1),
			Settings: &scheduling.SettingsOverride{SoftAffinityWeightMultiplier: &neg}}})
		wantKind(t, err, models.Invalid, "soft_affinity_weight_multiplier")
		if _, g, _ := s.GetSettings(ctx); g != 1 {
			t.Fatalf("refused changes were written: gen %d", g)
		}
	})
}
