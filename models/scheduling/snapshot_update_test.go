package scheduling

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
)

// TestWithAggregatesMatchesRebuild changes aggregates of a generated cloud
// (metadata that tenant isolation, zones, reservations and the instance
// type filter read; members; one added, one deleted) and checks that the
// updated snapshot answers every request exactly as one built from scratch.
func TestWithAggregatesMatchesRebuild(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	base, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	// Warm the lazy caches of the old snapshot: the new one must not see them.
	for _, body := range updateRequests(w) {
		spec, err := DecodeRequestJSON([]byte(body), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := base.Run(spec); err != nil {
			t.Fatal(err)
		}
	}

	nw := *w
	nw.Aggregates = slices.Clone(w.Aggregates)
	changed := map[string]bool{}
	edit := func(i int, f func(a *models.Aggregate)) {
		a := nw.Aggregates[i]
		a.Metadata = clone(a.Metadata)
		a.Members = slices.Clone(a.Members)
		f(&a)
		nw.Aggregates[i] = a
		changed[a.UUID] = true
	}
	edit(1, func(a *models.Aggregate) { a.Metadata["filter_tenant_id"] = "project-3" })
	edit(2, func(a *models.Aggregate) { a.Metadata["reservation:extra"] = "true" })
	edit(3, func(a *models.Aggregate) { a.Members = append(a.Members, w.Providers[0].UUID, w.Providers[5].UUID) })
	edit(4, func(a *models.Aggregate) { a.Members = nil; a.Metadata["force_metadata_check"] = "true" })
	edit(5, func(a *models.Aggregate) { a.Metadata["trait:CUSTOM_WINDOWS"] = "required" })
	deleted := nw.Aggregates[6].UUID
	nw.Aggregates = slices.Delete(nw.Aggregates, 6, 7)
	changed[deleted] = true
	added := models.Aggregate{UUID: "00000000-0000-4000-8000-0000000000aa", Name: "added",
		Metadata: map[string]string{"filter_tenant_id": "project-1"}, Members: []string{w.Providers[0].UUID}}
	nw.Aggregates = append(nw.Aggregates, added)
	changed[added.UUID] = true

	updated, err := base.WithAggregates(&nw, changed)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := NewSnapshot(&nw)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range updateRequests(&nw) {
		spec, err := DecodeRequestJSON([]byte(body), "")
		if err != nil {
			t.Fatal(err)
		}
		a, errA := updated.Run(spec)
		b, errB := rebuilt.Run(spec)
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("%s: updated says %v, rebuilt says %v", body, errA, errB)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: the updated snapshot answers differently:\n%s\n%s", body, ja, jb)
		}
	}
	// A second update that touches no key a cached view reads (a note, and
	// members of an aggregate without tenant keys) keeps those views: the
	// answers must still be a rebuild's.
	for _, body := range updateRequests(&nw) {
		spec, _ := DecodeRequestJSON([]byte(body), "")
		updated.Run(spec) // warm the views
	}
	nw2 := nw
	nw2.Aggregates = slices.Clone(nw.Aggregates)
	changed2 := map[string]bool{}
	for i := range nw2.Aggregates {
		a := &nw2.Aggregates[i]
		hasTenant := false
		for k := range a.Metadata {
			hasTenant = hasTenant || IsTenantKey(k)
		}
		if !hasTenant && len(a.Members) > 0 {
			a.Metadata = clone(a.Metadata)
			a.Metadata["note"] = "changed"
			a.Members = slices.Clone(a.Members[1:])
			changed2[a.UUID] = true
			break
		}
	}
	if len(changed2) != 1 {
		t.Fatal("no aggregate without tenant keys to change")
	}
	updated2, err := updated.WithAggregates(&nw2, changed2)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt2, err := NewSnapshot(&nw2)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range updateRequests(&nw2) {
		spec, _ := DecodeRequestJSON([]byte(body), "")
		a, errA := updated2.Run(spec)
		b, errB := rebuilt2.Run(spec)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if fmt.Sprint(errA) != fmt.Sprint(errB) || string(ja) != string(jb) {
			t.Errorf("%s: after the second update the answer differs:\n%s\n%s", body, ja, jb)
		}
	}

	// Providers changed in place (a generation) are taken over.
	inPlace := nw
	inPlace.Providers = slices.Clone(nw.Providers)
	inPlace.Providers[3].Generation += 5
	moved, err := base.WithAggregates(&inPlace, changed)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := moved.Provider(inPlace.Providers[3].UUID); !ok || p.Generation != inPlace.Providers[3].Generation {
		t.Errorf("provider after an in-place change: %+v", p)
	}
	if h, ok := moved.Host(inPlace.Providers[0].Name); !ok || h.Provider != &inPlace.Providers[0] {
		t.Error("the hosts still point at the old providers")
	}
	// A world whose providers differ otherwise is refused, not half-updated.
	other := nw
	other.Providers = slices.Clone(nw.Providers)
	other.Providers[0].Name = "renamed"
	if _, err := base.WithAggregates(&other, changed); err == nil {
		t.Error("WithAggregates accepted a world with a renamed provider")
	}
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func updateRequests(w *models.World) []string {
	var out []string
	for p := 0; p < 5; p++ {
		for _, f := range []string{"", cloudgen.FlavorSmall, cloudgen.FlavorReserved, cloudgen.FlavorWindows, cloudgen.FlavorSSD} {
			req := map[string]any{"project_id": fmt.Sprintf("project-%d", p)}
			if f != "" {
				req["flavor"] = f
			}
			if p%2 == 1 {
				req["placement"] = map[string]any{"member_of": []string{"!" + w.Aggregates[3].UUID}}
			}
			b, _ := json.Marshal(req)
			out = append(out, string(b))
		}
	}
	return out
}
