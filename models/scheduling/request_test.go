package scheduling

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

func TestDecodeRequest(t *testing.T) {
	doc := `{
	  "project_id": "tA", "user_id": "u1", "flavor": "m1.small", "availability_zone": "az1",
	  "server_group": "web", "num_instances": 2,
	  "placement": {"member_of": ["!in:aggA,aggB"], "groups": {"1": {"member_of": ["aggC"]}}},
	  "settings": {"enabled_filters": ["AggregateInstanceTypeFilter"], "limit_tenants_to_placement_aggregate": true},
	  "limit": 200
	}`
	spec, err := DecodeRequest(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := &RequestSpec{ProjectID: "tA", UserID: "u1", Flavor: FlavorRef{Name: "m1.small"}, AvailabilityZone: "az1",
		ServerGroup: "web", NumInstances: 2,
		Placement: PlacementSpec{MemberOf: []string{"!in:aggA,aggB"}, Groups: map[string]GroupSpec{"1": {MemberOf: []string{"aggC"}}}},
		Settings:  &SettingsOverride{EnabledFilters: &[]string{"AggregateInstanceTypeFilter"}, LimitTenantsToPlacementAggregate: ptr(true)},
		Limit:     200}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("got %+v\nwant %+v", spec, want)
	}
	// The settings override only what it names.
	s := spec.Settings.Apply(models.DefaultSettings())
	if !s.LimitTenantsToPlacementAggregate || s.RequiredMemberPrefix != "reservation:" || len(s.EnabledFilters) != 1 {
		t.Errorf("applied settings %+v", s)
	}
	// Encoding gives back an equivalent document.
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeRequestJSON(data, "")
	if err != nil || !reflect.DeepEqual(again, spec) {
		t.Errorf("re-decode of %s: %+v, %v", data, again, err)
	}

	inline, err := DecodeRequest(strings.NewReader(`{"flavor": {"vcpus": 2, "extra_specs": {"aggregate_instance_extra_specs:ssd": "true"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if f := inline.Flavor.Inline; f == nil || f.VCPUs != 2 || f.ExtraSpecs["aggregate_instance_extra_specs:ssd"] != "true" || inline.NumInstances != 1 {
		t.Errorf("inline flavor %+v", inline)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	cases := []struct{ doc, field, msg string }{
		{`{"projet_id": "x"}`, "projet_id", "unknown field"},
		{`{"placement": {"member_of": ["x"], "group": {}}}`, "placement.group", "unknown field"},
		{`{"placement": {"groups": {"1": {"member_of": [], "x": 1}}}}`, "placement.groups.1.x", "unknown field"},
		{`{"placement": {"groups": {"a b": {"member_of": []}}}}`, "placement.groups.a b", "group suffix"},
		{`{"flavor": {"vcpus": 1, "colour": "red"}}`, "flavor.colour", "unknown field"},
		{`{"flavor": 3}`, "flavor", "expected a flavor name"},
		{`{"flavor": ""}`, "flavor", "must not be empty"},
		{`{"settings": {"enabled_filter": []}}`, "settings.enabled_filter", "unknown field"},
		{`{"limit": -1}`, "limit", "must not be negative"},
		{`{"num_instances": 0}`, "num_instances", "at least 1"},
		{`{"limit": "ten"}`, "limit", "expected a number"},
		{`{"project_id": 1}`, "project_id", "expected a string"},
		{`[]`, "", "expected"},
		{`{`, "", "truncated"},
	}
	for _, c := range cases {
		_, err := DecodeRequest(strings.NewReader(c.doc))
		if models.KindOf(err) != models.Invalid || models.FieldOf(err) != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err %v (field %q), want field %q containing %q", c.doc, err, models.FieldOf(err), c.field, c.msg)
		}
	}
}

// TestRunBadInput: references that do not resolve are Invalid errors that
// name the field and the value, not traces.
func TestRunBadInput(t *testing.T) {
	s := seedSnapshot(t, nil)
	cases := []struct {
		spec  RequestSpec
		field string
		msg   string
	}{
		{RequestSpec{Flavor: FlavorRef{Name: "m9.huge"}}, "flavor", `no flavor named "m9.huge"`},
		{RequestSpec{ServerGroup: "nope"}, "server_group", `no server group named "nope"`},
		{RequestSpec{Placement: PlacementSpec{MemberOf: []string{"in:aggA,!aggB"}}}, "placement.member_of",
			"Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: !aggB"},
		{RequestSpec{Placement: PlacementSpec{MemberOf: []string{"aggZ"}}}, "placement.member_of", `no aggregate named "aggZ"`},
		{RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!aggA,aggB"}}}, "placement.member_of", "must be prefixed with the 'in:' or '!in:' keyword"},
		{RequestSpec{Placement: PlacementSpec{Groups: map[string]GroupSpec{"1": {MemberOf: []string{"bad"}}}}}, "placement.groups.1.member_of", `no aggregate named "bad"`},
		{RequestSpec{Settings: &SettingsOverride{EnabledFilters: &[]string{"RamFilter"}}}, "settings.enabled_filters[0]", `unknown host filter "RamFilter"`},
	}
	for _, c := range cases {
		tr, err := s.Run(&c.spec)
		if tr != nil || models.KindOf(err) != models.Invalid || models.FieldOf(err) != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: err %v (field %q), want field %q containing %q", c.spec, err, models.FieldOf(err), c.field, c.msg)
		}
	}
}

// A private flavor is Nova's to refuse for a project not in its access
// list: the preview says so, the impact matrix counts no host for that
// project, and a project on the list schedules as with a public flavor.
func TestPrivateFlavorAccess(t *testing.T) {
	s := seedSnapshot(t, func(w *models.World) {
		w.Flavors = append(w.Flavors, models.Flavor{ID: "fp", Name: "private", VCPUs: 1, ExtraSpecs: map[string]string{},
			Private: true, Projects: []string{"p-allowed"}})
	})
	tr, err := s.Run(&RequestSpec{ProjectID: "p-other", Flavor: FlavorRef{Name: "private"}})
	if tr != nil || models.KindOf(err) != models.Invalid || models.FieldOf(err) != "flavor" ||
		!strings.Contains(err.Error(), `flavor "private" is private and project "p-other" is not in its access list`) {
		t.Fatalf("other project: trace %v err %v", tr != nil, err)
	}
	allowed := mustRun(t, s, &RequestSpec{ProjectID: "p-allowed", Flavor: FlavorRef{Name: "private"}})
	public := mustRun(t, s, &RequestSpec{ProjectID: "p-allowed", Flavor: FlavorRef{Name: "m1.small"}})
	if len(allowed.Hosts) == 0 || len(allowed.Hosts) != len(public.Hosts) {
		t.Errorf("allowed project: %d hosts, with a public flavor %d", len(allowed.Hosts), len(public.Hosts))
	}
	m, err := ComputeImpact(s, s, []string{"p-allowed", "p-other"}, []string{"private"})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ComputeImpactWith(s, s, ImpactOptions{Projects: []string{"p-allowed", "p-other"}, Flavors: []string{"private"}, WholeRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Impact{m, whole} {
		if x.Cells[0][0].Live == 0 || x.Cells[1][0].Live != 0 || x.Cells[1][0].Error != "" {
			t.Errorf("impact (whole runs %v): allowed %d hosts, other %+v (want some, none)", x.WholeRuns, x.Cells[0][0].Live, x.Cells[1][0])
		}
	}
}
