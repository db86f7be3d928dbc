package forms_test

import (
	"net/url"
	"slices"
	"testing"

	"corral/handlers/forms"
	"corral/models"
	"corral/models/scheduling"
)

// smallWorld has two hosts, an aggregate holding cn1 and a flavor.
func smallWorld(t *testing.T) *scheduling.Snapshot {
	t.Helper()
	cn1, cn2 := models.NewUUID(), models.NewUUID()
	w := &models.World{
		Settings: models.DefaultSettings(),
		Providers: []models.Provider{
			{UUID: cn1, Name: "cn1", RootUUID: cn1, Inventories: map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1, MaxUnit: 8, MinUnit: 1, StepSize: 1}}},
			{UUID: cn2, Name: "cn2", RootUUID: cn2, Inventories: map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1, MaxUnit: 8, MinUnit: 1, StepSize: 1}}},
		},
		Aggregates: []models.Aggregate{{ID: 1, UUID: models.NewUUID(), Name: "aggA", Metadata: map[string]string{"colour": "blue"}, Members: []string{cn1}}},
		Flavors:    []models.Flavor{{ID: "1", Name: "m1", VCPUs: 1, RAMMB: 512, ExtraSpecs: map[string]string{}}},
	}
	snap, err := scheduling.NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestSplitListTakesEverySeparator(t *testing.T) {
	got := forms.SplitList("a,b;c d\ne\r\nf\tg;;a")
	if want := []string{"a", "b", "c", "d", "e", "f", "g"}; !slices.Equal(got, want) {
		t.Errorf("SplitList = %q, want %q", got, want)
	}
}

func TestMembersAddReadsPastedLists(t *testing.T) {
	snap := smallWorld(t)
	agg, _ := snap.Aggregate("aggA")
	for _, bulk := range []string{"cn1;cn2", "cn2", "cn2,cn2", "cn1\tcn2"} {
		r := forms.MembersAdd(url.Values{"bulk": {bulk}}, agg, snap)
		if r.Refused() || len(r.Changes) != 1 || r.Changes[0].Provider != "cn2" || r.Changes[0].Op != scheduling.OpAddMember {
			t.Errorf("%q: %+v", bulk, r)
		}
	}
	if r := forms.MembersAdd(url.Values{"bulk": {"cn1;nosuch"}}, agg, snap); !r.Refused() || len(r.Changes) != 0 {
		t.Errorf("an unknown host: %+v", r)
	}
	if r := forms.MembersAdd(url.Values{"bulk": {"cn1"}}, agg, snap); r.Refused() || len(r.Changes) != 0 || !slices.Equal(r.Skipped, []string{"cn1"}) {
		t.Errorf("a member already: %+v", r)
	}
}

func TestMetadataKeepsTypedKeysAndRefusesDuplicates(t *testing.T) {
	snap := smallWorld(t)
	agg, _ := snap.Aggregate("aggA")
	r := forms.Metadata(url.Values{"key": {"colour", "size"}, "value": {"red", "xl"}}, agg, snap)
	if r.Refused() || len(r.Changes) != 2 || r.Changes[0].Key != "colour" || r.Changes[1].Key != "size" {
		t.Errorf("edit: %+v", r)
	}
	if r := forms.Metadata(url.Values{"key": {"colour", "colour"}, "value": {"a", "b"}}, agg, snap); !r.Refused() {
		t.Errorf("a key given twice is saved: %+v", r)
	}
	if r := forms.Metadata(url.Values{"key": {"filter_tenant_id"}, "value": {"acme"}}, agg, snap); !r.Refused() {
		t.Errorf("a tenant key in the raw editor is saved: %+v", r)
	}
}

func TestFlavorReadsBadNumbersAsRefusals(t *testing.T) {
	snap := smallWorld(t)
	f, _ := snap.Flavor("m1")
	for _, v := range []url.Values{{"name": {"m1"}, "vcpus": {"x"}}, {"name": {" "}}, {"ram_mb": {"0"}}} {
		if r := forms.Flavor(v, f, snap.World().Settings); !r.Refused() {
			t.Errorf("%v: %+v", v, r)
		}
	}
	r := forms.Flavor(url.Values{"name": {"m2"}, "vcpus": {"2"}, "ram_mb": {"512"}, "disk_gb": {"0"}}, f, snap.World().Settings)
	if r.Refused() || len(r.Changes) != 1 || r.Changes[0].Op != scheduling.OpUpdateFlavor || r.Changes[0].Value != "m2" || r.Changes[0].Size.VCPUs != 2 {
		t.Errorf("rename and resize: %+v", r)
	}
}

// Every reader that edits an object puts the generation its form was
// typed on onto the changes, so that the write path refuses a stale save
// in the transaction that would apply it.
func TestReadersCarryTheFormsGeneration(t *testing.T) {
	snap := smallWorld(t)
	w := snap.World()
	agg, _ := snap.Aggregate("aggA")
	cn2, _ := snap.Provider("cn2")
	fl, _ := snap.Flavor("m1")
	g := &models.ServerGroup{UUID: models.NewUUID(), Name: "g1", ProjectID: "p1", Members: []string{"s1"}}
	with := func(v url.Values) url.Values { v.Set("generation", "7"); return v }
	reads := map[string]forms.Read{
		"zone":         forms.AggregateUpdate(with(url.Values{"name": {"aggB"}}), agg, snap),
		"metadata":     forms.Metadata(with(url.Values{"key": {"colour"}, "value": {"red"}}), agg, snap),
		"tenants":      forms.Tenants(with(url.Values{"project": {"p1"}}), agg, snap, false),
		"members":      forms.MembersAdd(with(url.Values{"bulk": {"cn2"}}), agg, snap),
		"members-rm":   forms.MembersRemove(with(url.Values{"provider": {"cn1"}}), agg, snap),
		"flavor":       forms.Flavor(with(url.Values{"key": {"hw:cpu_policy"}, "value": {"dedicated"}}), fl, w.Settings),
		"traits":       forms.Traits(with(url.Values{"traits": {"CUSTOM_X"}}), cn2),
		"group-remove": forms.GroupMembersRemove(with(url.Values{"server": {"s1"}}), g),
	}
	for name, r := range reads {
		if r.Refused() || len(r.Changes) == 0 {
			t.Errorf("%s: refused or empty: %+v", name, r)
			continue
		}
		for i, c := range r.Changes {
			if c.Generation == nil || *c.Generation != 7 {
				t.Errorf("%s: change %d (%s) carries generation %v, want 7", name, i, c.Op, c.Generation)
			}
		}
	}
	// A form without its generation (a preview of a form typed from
	// scratch) names none.
	if r := forms.MembersAdd(url.Values{"bulk": {"cn2"}}, agg, snap); len(r.Changes) != 1 || r.Changes[0].Generation != nil {
		t.Errorf("no generation in the form: %+v", r.Changes)
	}
}
