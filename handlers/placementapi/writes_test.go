package placementapi_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
	"corral/web/webtest"
)

// recordingWriter hands changes to the store and remembers their ops, one
// list per call.
type recordingWriter struct {
	st    *store.Store
	mu    sync.Mutex
	calls [][]string
}

func (w *recordingWriter) Apply(ctx context.Context, a store.Actor, changes []scheduling.Change) (*scheduling.Applied, error) {
	ops := make([]string, len(changes))
	for i, c := range changes {
		ops[i] = c.Op
	}
	w.mu.Lock()
	w.calls = append(w.calls, ops)
	w.mu.Unlock()
	return w.st.Apply(ctx, a, changes)
}

func (w *recordingWriter) take() [][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.calls
	w.calls = nil
	return out
}

// TestEveryWriteGoesThroughTheWriter sends every write of the API and
// checks that each is one call of the write path with the changes it
// amounts to, and that nothing else moves the store's revision: the
// handlers write nothing by themselves.
func TestEveryWriteGoesThroughTheWriter(t *testing.T) {
	st := storetest.Open(t)
	rec := &recordingWriter{st: st}
	w := webtest.StartWith(t, webtest.Options{Store: st, Tokens: true, Writer: rec, Users: []webtest.User{
		{Name: "ops-admin", Role: models.RoleAdmin, Project: "ops", Password: "a-long-enough-password"},
	}})
	a := &app{t: t, URL: w.URL + "/placement", Store: st, Admin: w.Tokens["ops-admin"], web: w}
	const rp, child = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	const agg, consumer, other = "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444", "55555555-5555-4555-8555-555555555555"
	gen := func() int64 {
		p, err := st.GetProvider(context.Background(), rp)
		if err != nil {
			t.Fatal(err)
		}
		return p.Generation
	}
	alloc := func(n int) map[string]any {
		return map[string]any{"allocations": map[string]any{rp: map[string]any{"resources": map[string]any{"VCPU": n}}},
			"project_id": "p", "user_id": "u", "consumer_generation": nil, "consumer_type": "INSTANCE"}
	}
	steps := []struct {
		method, path, version string
		body                  func() any
		status                int
		ops                   []string
	}{
		{"POST", "/resource_providers", "1.39", func() any { return map[string]any{"name": "rp", "uuid": rp} }, 200, []string{scheduling.OpCreateProvider}},
		{"POST", "/resource_providers", "1.39", func() any { return map[string]any{"name": "child", "uuid": child} }, 200, []string{scheduling.OpCreateProvider}},
		{"PUT", "/resource_providers/" + rp, "1.39", func() any { return map[string]any{"name": "rp2"} }, 200, []string{scheduling.OpRenameProvider}},
		{"PUT", "/resource_providers/" + child, "1.39", func() any { return map[string]any{"name": "child", "parent_provider_uuid": rp} }, 200,
			[]string{scheduling.OpRenameProvider, scheduling.OpSetProviderParent}},
		{"PUT", "/resource_providers/" + rp + "/inventories", "1.39", func() any {
			return map[string]any{"resource_provider_generation": gen(), "inventories": map[string]any{"VCPU": map[string]any{"total": 8}}}
		}, 200, []string{scheduling.OpSetInventories}},
		{"POST", "/resource_providers/" + rp + "/inventories", "1.39", func() any {
			return map[string]any{"resource_provider_generation": gen(), "resource_class": "MEMORY_MB", "total": 1024}
		}, 201, []string{scheduling.OpSetInventories}},
		{"PUT", "/resource_providers/" + rp + "/inventories/MEMORY_MB", "1.39", func() any {
			return map[string]any{"resource_provider_generation": gen(), "total": 2048}
		}, 200, []string{scheduling.OpSetInventories}},
		{"DELETE", "/resource_providers/" + rp + "/inventories/MEMORY_MB", "1.39", nil, 204, []string{scheduling.OpSetInventories}},
		{"PUT", "/resource_providers/" + rp + "/traits", "1.39", func() any {
			return map[string]any{"resource_provider_generation": gen(), "traits": []string{"HW_CPU_X86_AVX2"}}
		}, 200, []string{scheduling.OpSetTraits}},
		{"DELETE", "/resource_providers/" + rp + "/traits", "1.39", nil, 204, []string{scheduling.OpSetTraits}},
		{"PUT", "/resource_providers/" + rp + "/aggregates", "1.39", func() any {
			return map[string]any{"resource_provider_generation": gen(), "aggregates": []string{agg}}
		}, 200, []string{scheduling.OpSetProviderAggregates}},
		{"PUT", "/resource_providers/" + rp + "/aggregates", "1.18", func() any { return []string{} }, 200, []string{scheduling.OpSetProviderAggregates}},
		{"POST", "/resource_classes", "1.39", func() any { return map[string]any{"name": "CUSTOM_A"} }, 201, []string{scheduling.OpCreateResourceClass}},
		{"PUT", "/resource_classes/CUSTOM_B", "1.39", nil, 201, []string{scheduling.OpCreateResourceClass}},
		{"DELETE", "/resource_classes/CUSTOM_A", "1.39", nil, 204, []string{scheduling.OpDeleteResourceClass}},
		{"PUT", "/traits/CUSTOM_T", "1.39", nil, 201, []string{scheduling.OpCreateTrait}},
		{"DELETE", "/traits/CUSTOM_T", "1.39", nil, 204, []string{scheduling.OpDeleteTrait}},
		{"PUT", "/allocations/" + consumer, "1.39", func() any { return alloc(2) }, 204, []string{scheduling.OpSetAllocations}},
		{"POST", "/allocations", "1.39", func() any { return map[string]any{other: alloc(1)} }, 204, []string{scheduling.OpSetAllocations}},
		{"DELETE", "/allocations/" + consumer, "1.39", nil, 204, []string{scheduling.OpSetAllocations}},
		{"DELETE", "/allocations/" + other, "1.39", nil, 204, []string{scheduling.OpSetAllocations}},
		{"DELETE", "/resource_providers/" + rp + "/inventories", "1.39", nil, 204, []string{scheduling.OpSetInventories}},
		{"DELETE", "/resource_providers/" + child, "1.39", nil, 204, []string{scheduling.OpDeleteProvider}},
		{"DELETE", "/resource_providers/" + rp, "1.39", nil, 204, []string{scheduling.OpDeleteProvider}},
	}
	for _, s := range steps {
		rev0, err := st.Revision(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var body any
		if s.body != nil {
			body = s.body()
		}
		rec.take()
		r := a.call(s.method, s.path, s.version, a.Admin, body)
		if r.Status != s.status {
			t.Fatalf("%s %s: %d %s, want %d", s.method, s.path, r.Status, r.Body, s.status)
		}
		calls := rec.take()
		if len(calls) != 1 || !slices.Equal(calls[0], s.ops) {
			t.Errorf("%s %s handed %v to the write path, want one call of %v", s.method, s.path, calls, s.ops)
		}
		if rev, _ := st.Revision(context.Background()); rev != rev0+1 {
			t.Errorf("%s %s moved the revision from %d to %d, want one write", s.method, s.path, rev0, rev)
		}
	}
}
