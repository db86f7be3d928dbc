package models

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

const seedWorldJSON = `{
  "format": "corral.world/v1",
  "providers": [
    {"name": "numa1_1", "parent": "cn1"},
    {"uuid": "00000000-0000-4000-8000-000000000001", "name": "cn1", "parent": null, "traits": [],
     "inventories": {"VCPU": {"total": 16, "reserved": 0, "allocation_ratio": 4.0}}, "usages": {"VCPU": 3}},
    {"name": "numa1_2", "parent": "00000000-0000-4000-8000-000000000001"},
    {"name": "cn2"},
    {"name": "numa2_1", "parent": "cn2"},
    {"name": "ss1", "traits": ["MISC_SHARES_VIA_AGGREGATE"]}
  ],
  "aggregates": [
    {"uuid": "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "name": "aggA", "availability_zone": null,
     "metadata": {"filter_tenant_id": "tA"}, "members": ["cn1"]},
    {"name": "aggB", "availability_zone": "az1", "members": ["cn2", "ss1", "cn2"]}
  ],
  "flavors": [{"name": "m1.small", "vcpus": 1, "ram_mb": 2048, "disk_gb": 20,
               "extra_specs": {"aggregate_instance_extra_specs:ssd": "true"}}],
  "servers": [{"uuid": "11111111-1111-4111-8111-111111111111", "name": "web-1", "project_id": "tA", "host": "cn1"},
              {"name": "web-2", "project_id": "tA", "host": "00000000-0000-4000-8000-000000000001"}],
  "server_groups": [{"name": "web", "project_id": "tA", "user_id": "u1",
                     "policy": "anti-affinity", "rules": {"max_server_per_host": 2},
                     "members": ["11111111-1111-4111-8111-111111111111", "web-2"]}],
  "settings": {"limit_tenants_to_placement_aggregate": true, "enabled_filters": ["AggregateInstanceTypeFilter"]}
}`

func TestDecodeWorldSeed(t *testing.T) {
	w, err := DecodeWorld(strings.NewReader(seedWorldJSON))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Provider{}
	for i := range w.Providers {
		byName[w.Providers[i].Name] = &w.Providers[i]
	}
	cn1 := byName["cn1"]
	if cn1.UUID != "00000000-0000-4000-8000-000000000001" || cn1.Inventories["VCPU"].Total != 16 || cn1.Usages["VCPU"] != 3 {
		t.Errorf("cn1 = %+v", cn1)
	}
	for _, child := range []string{"numa1_1", "numa1_2"} {
		p := byName[child]
		if p.ParentUUID == nil || *p.ParentUUID != cn1.UUID || p.RootUUID != cn1.UUID {
			t.Errorf("%s: parent/root not cn1: %+v", child, p)
		}
		if !ValidUUID(p.UUID) || p.UUID[14] != '4' {
			t.Errorf("%s: generated uuid %q is not a v4 UUID", child, p.UUID)
		}
	}
	if !byName["ss1"].IsSharing() || byName["ss1"].RootUUID != byName["ss1"].UUID {
		t.Errorf("ss1 = %+v", byName["ss1"])
	}
	aggB := w.Aggregates[1]
	if !reflect.DeepEqual(aggB.Members, []string{byName["cn2"].UUID, byName["ss1"].UUID}) || *aggB.AvailabilityZone != "az1" {
		t.Errorf("aggB = %+v", aggB)
	}
	if w.Servers[1].Host != "cn1" {
		t.Errorf("server host by uuid resolved to %q, want cn1", w.Servers[1].Host)
	}
	g := w.ServerGroups[0]
	if !reflect.DeepEqual(g.Members, []string{w.Servers[0].UUID, w.Servers[1].UUID}) || g.MaxServerPerHost() != 2 {
		t.Errorf("group = %+v", g)
	}
	// Settings overlay the defaults: given fields replaced, others kept.
	if !w.Settings.LimitTenantsToPlacementAggregate || !reflect.DeepEqual(w.Settings.EnabledFilters, []string{"AggregateInstanceTypeFilter"}) ||
		w.Settings.RequiredMemberPrefix != "reservation:" || w.Settings.SoftAffinityWeightMultiplier != 1 {
		t.Errorf("settings = %+v", w.Settings)
	}
}

func TestWorldRoundTrip(t *testing.T) {
	w, err := DecodeWorld(strings.NewReader(seedWorldJSON))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := EncodeWorld(&buf, w); err != nil {
		t.Fatal(err)
	}
	w2, err := DecodeWorld(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("re-decode: %v\n%s", err, buf.String())
	}
	// A document that leaves a field out decodes it as nil (a merge import
	// keeps what is not mentioned), and the encoder writes every field:
	// so the encoded form is the fixed point.
	var buf2 bytes.Buffer
	if err := EncodeWorld(&buf2, w2); err != nil {
		t.Fatal(err)
	}
	if buf.String() != buf2.String() {
		t.Errorf("encoding differs after a round trip:\n%s\n%s", buf.String(), buf2.String())
	}
	w3, err := DecodeWorld(bytes.NewReader(buf2.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w2, w3) {
		t.Errorf("round trip differs:\n%+v\n%+v", w2, w3)
	}
}

func TestDecodeWorldErrors(t *testing.T) {
	cases := []struct {
		doc   string
		field string
		msg   string
	}{
		{`{"providers": [{"name": "cn1"}], "aggregates": [{"name": "a"}, {"name": "b"}, {"name": "c", "members": ["cn9"]}]}`,
			"aggregates[2].members[0]", `no provider named "cn9"`},
		{`{"providers": [{"name": "cn1", "colour": "red"}]}`, "providers[0].colour", "unknown field"},
		{`{"providers": [{"name": "cn1", "inventories": {"VCPU": {"total": "x"}}}]}`, "providers[0].inventories.total", "expected a number"},
		{`{"provider": []}`, "provider", "unknown field"},
		{`{"providers": [{"name": "a", "parent": "b"}, {"name": "b", "parent": "a"}]}`, "providers[0].parent", "cycle"},
		{`{"providers": [{"name": "a", "parent": "zz"}]}`, "providers[0].parent", `no provider named "zz"`},
		{`{"providers": [{"name": "a"}, {"name": "a"}]}`, "providers[1].name", "duplicate provider name"},
		{`{"providers": [{"name": "a", "uuid": "nope"}]}`, "providers[0].uuid", "is not a UUID"},
		{`{"servers": [{"name": "s", "host": "cnX"}]}`, "servers[0].host", `no host named "cnX"`},
		{`{"server_groups": [{"name": "g", "policy": "packed"}]}`, "server_groups[0].policy", "unknown policy"},
		{`{"server_groups": [{"name": "g", "policy": "affinity", "rules": {"max_server_per_host": 2}}]}`, "server_groups[0].rules", "Only anti-affinity policy supports rules"},
		{`{"server_groups": [{"name": "g", "policy": "affinity", "members": ["ghost"]}]}`, "server_groups[0].members[0]", `no server named "ghost"`},
		{`{"settings": {"enabled_filter": []}}`, "settings.enabled_filter", "unknown field"},
		{`{"format": "corral.world/v2"}`, "format", "unsupported format"},
		{`{"flavors": [{"name": "f"}, {"name": "f"}]}`, "flavors[1].name", "duplicate flavor name"},
		{`{"flavors": [{"name": "f", "projects": ["p1"]}]}`, "flavors[0].projects", "only a private flavor has an access list"},
		{`{"flavors": [{"name": "f", "private": true, "projects": ["p1", "p1"]}]}`, "flavors[0].projects[1]", `project "p1" is listed twice`},
		{`{"flavors": [{"name": "f", "private": true, "projects": [""]}]}`, "flavors[0].projects[0]", "a project id is 1-255 characters"},
		{`{"providers": [`, "", "truncated JSON"},
		{``, "", "empty document"},
		{`{} {}`, "", "unexpected data"},
	}
	for _, c := range cases {
		_, err := DecodeWorld(strings.NewReader(c.doc))
		if err == nil {
			t.Errorf("%s: no error", c.doc)
			continue
		}
		if KindOf(err) != Invalid || FieldOf(err) != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v (field %q), want field %q containing %q", c.doc, err, FieldOf(err), c.field, c.msg)
		}
	}
	// The example message of the format's documentation, verbatim.
	_, err := DecodeWorld(strings.NewReader(cases[0].doc))
	if err.Error() != `aggregates[2].members[0]: no provider named "cn9"` {
		t.Errorf("message %q", err.Error())
	}
}

// TestWorldAllocations: a world's allocations add to its providers' usages.
func TestWorldAllocations(t *testing.T) {
	w, err := DecodeWorldJSON([]byte(`{"providers": [{"name": "cn1", "inventories": {"VCPU": {"total": 8, "allocation_ratio": 1}}, "usages": {"VCPU": 1}}],
		"allocations": [{"consumer": "c1", "project_id": "p", "user_id": "u", "resources": {"cn1": {"VCPU": 2, "MEMORY_MB": 512}}},
		                {"consumer": "c2", "resources": {"cn1": {"VCPU": 3}}}]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Providers[0].Usages; got["VCPU"] != 6 || got["MEMORY_MB"] != 512 {
		t.Errorf("usages %v", got)
	}
	for doc, want := range map[string]string{
		`{"providers": [{"name": "cn1"}], "allocations": [{"consumer": "c", "resources": {"cn2": {"VCPU": 1}}}]}`: `allocations[0].resources: no provider named "cn2"`,
		`{"providers": [{"name": "cn1"}], "allocations": [{"consumer": "c", "resources": {"cn1": {"VCPU": 0}}}]}`: "an amount is at least 1",
		`{"providers": [{"name": "cn1"}], "allocations": [{"resources": {"cn1": {"VCPU": 1}}}]}`:                  "needs its consumer",
		`{"providers": [{"name": "cn1"}], "allocations": [{"consumer": "c", "bogus": 1}]}`:                        "bogus",
	} {
		if _, err := DecodeWorldJSON([]byte(doc), ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}

// TestWorldAllocationsRoundTrip: a world's consumers survive encoding —
// usages beyond the allocations stay in "usages", the allocations come back
// with their project, user, type and generation, and a consumer named
// rather than identified gets its name's UUID.
func TestWorldAllocationsRoundTrip(t *testing.T) {
	w, err := DecodeWorldJSON([]byte(`{"providers": [
		{"name": "cn1", "inventories": {"VCPU": {"total": 8, "allocation_ratio": 1}}, "usages": {"VCPU": 1, "DISK_GB": 0}},
		{"name": "cn2", "usages": {"VCPU": 4}}],
		"allocations": [{"consumer": "c1", "project_id": "p", "user_id": "u", "consumer_type": "INSTANCE", "consumer_generation": 3,
		                  "resources": {"cn1": {"VCPU": 2, "MEMORY_MB": 512}}},
		                {"consumer": "AAAAAAAA-0000-4000-8000-000000000002", "resources": {"cn1": {"VCPU": 3}}}]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Consumers) != 2 || w.Consumers[0].UUID != "12e1d2de-1566-560a-bd3a-8159b1c0d9ff" || w.Consumers[1].UUID != "aaaaaaaa-0000-4000-8000-000000000002" {
		t.Fatalf("consumers %+v", w.Consumers) // the uuid is Python's uuid5(NAMESPACE_URL, "consumer:c1")
	}
	c1 := w.Consumers[0]
	if c1.ProjectID != "p" || c1.UserID != "u" || c1.ConsumerType != "INSTANCE" || c1.Generation != 3 || len(c1.Allocations) != 2 {
		t.Errorf("c1 %+v", c1)
	}
	var buf bytes.Buffer
	if err = EncodeWorld(&buf, w); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeWorldJSON(buf.Bytes(), "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range w.Providers {
		if !reflect.DeepEqual(w.Providers[i].Usages, back.Providers[i].Usages) {
			t.Errorf("%s usages %v, back %v", w.Providers[i].Name, w.Providers[i].Usages, back.Providers[i].Usages)
		}
	}
	if !reflect.DeepEqual(w.Consumers, back.Consumers) {
		t.Errorf("consumers %+v, back %+v", w.Consumers, back.Consumers)
	}
	if !strings.Contains(buf.String(), `"usages": {
        "DISK_GB": 0,
        "VCPU": 1
      }`) {
		t.Errorf("cn1's usages beyond its allocations are not written as such:\n%s", buf.String())
	}
}
