package models_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"corral/models"
)

// TestDecodeWorldRecordsGivenFields: the decoder says which optional
// fields each entry named, null included, so that a merge import keeps
// the others; an export names every field of every object.
func TestDecodeWorldRecordsGivenFields(t *testing.T) {
	w, err := models.DecodeWorld(strings.NewReader(`{
	  "providers": [{"name": "a"}, {"name": "b", "parent": null, "traits": []},
	                {"name": "c", "inventories": {}, "usages": {}}, {"name": "d"}],
	  "aggregates": [{"name": "x"}, {"name": "y", "availability_zone": null, "metadata": {}, "members": []}],
	  "flavors": [{"name": "f"}, {"name": "g", "vcpus": 0, "ram_mb": 1, "disk_gb": 2, "extra_specs": {}}],
	  "servers": [{"uuid": "00000000-0000-4000-8000-000000000001"}, {"name": "s", "project_id": "", "user_id": "u", "host": ""}],
	  "server_groups": [{"name": "sg", "policy": "affinity"}, {"policy": "affinity", "rules": {}, "members": [], "project_id": "p", "user_id": "u"}],
	  "allocations": [{"consumer": "c1", "resources": {"d": {"VCPU": 1}}}],
	  "settings": {"enabled_filters": []}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	g := w.Given
	if g == nil {
		t.Fatal("no Given from a document")
	}
	check := func(what string, got, want models.Fields) {
		t.Helper()
		if got != want {
			t.Errorf("%s: fields %b, want %b", what, got, want)
		}
	}
	check("provider a", g.Providers[0], 0)
	check("provider b", g.Providers[1], models.FieldParent|models.FieldTraits)
	check("provider c", g.Providers[2], models.FieldInventories|models.FieldUsages)
	check("provider d", g.Providers[3], models.FieldAllocated)
	check("aggregate x", g.Aggregates[0], 0)
	check("aggregate y", g.Aggregates[1], models.FieldZone|models.FieldMetadata|models.FieldMembers)
	check("flavor f", g.Flavors[0], 0)
	check("flavor g", g.Flavors[1], models.FieldVCPUs|models.FieldRAMMB|models.FieldDiskGB|models.FieldExtraSpecs)
	check("server 0", g.Servers[0], 0)
	check("server s", g.Servers[1], models.FieldName|models.FieldProjectID|models.FieldUserID|models.FieldHost)
	check("group sg", g.ServerGroups[0], models.FieldName|models.FieldPolicy)
	check("group 1", g.ServerGroups[1], models.FieldPolicy|models.FieldRules|models.FieldMembers|models.FieldProjectID|models.FieldUserID)
	if len(g.Settings) != 1 || g.Settings[0] != "enabled_filters" {
		t.Errorf("settings given: %v", g.Settings)
	}

	// An export names everything, so merging it back keeps nothing of
	// the database's own.
	var out bytes.Buffer
	if err := models.EncodeWorld(&out, w); err != nil {
		t.Fatal(err)
	}
	back, err := models.DecodeWorld(&out)
	if err != nil {
		t.Fatal(err)
	}
	provider := models.FieldParent | models.FieldTraits | models.FieldInventories | models.FieldUsages
	for i, f := range back.Given.Providers {
		if !f.Has(provider &^ models.FieldInventories &^ models.FieldUsages) {
			t.Errorf("exported provider %d gives only %b", i, f)
		}
	}
	for i, f := range back.Given.Aggregates {
		check("exported aggregate "+back.Aggregates[i].Name, f, models.FieldZone|models.FieldMetadata|models.FieldMembers)
	}
	for i, f := range back.Given.Flavors {
		check("exported flavor "+back.Flavors[i].Name, f, models.FieldVCPUs|models.FieldRAMMB|models.FieldDiskGB|models.FieldExtraSpecs)
	}
	for i, f := range back.Given.ServerGroups {
		check("exported group "+back.ServerGroups[i].Name, f, models.FieldName|models.FieldProjectID|models.FieldUserID|models.FieldPolicy|models.FieldRules|models.FieldMembers)
	}
	if len(back.Given.Settings) < 9 {
		t.Errorf("exported settings give only %v", back.Given.Settings)
	}
}

// FuzzDecodeWorld: no document makes the decoder panic, and a decoded
// world's export decodes to the same export (what corral writes, it reads
// back unchanged).
func FuzzDecodeWorld(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"providers": [{"name": "cn1", "traits": ["X"], "inventories": {"VCPU": {"total": 4}}}, {"name": "n", "parent": "cn1"}]}`,
		`{"aggregates": [{"name": "a", "availability_zone": "az", "metadata": {"k": "v"}, "members": []}]}`,
		`{"flavors": [{"name": "f", "vcpus": 1, "extra_specs": {"a": "b"}}], "settings": {"enabled_filters": []}}`,
		`{"providers": [{"name": "h"}], "servers": [{"name": "s", "host": "h"}], "server_groups": [{"name": "g", "policy": "anti-affinity", "rules": {"max_server_per_host": 2}, "members": ["s"]}]}`,
		`{"providers": [{"name": "p", "usages": {}}], "allocations": [{"consumer": "c", "resources": {"p": {"VCPU": 2}}}]}`,
		`{"providers": [{"name": "p", "parent": null}], "aggregates": [{"name": "a", "availability_zone": null}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		w, err := models.DecodeWorldJSON(doc, "")
		if err != nil {
			var me *models.Error
			if !errors.As(err, &me) || me.Kind != models.Invalid {
				t.Fatalf("decode error %v is not Invalid", err)
			}
			return
		}
		var first bytes.Buffer
		if err := models.EncodeWorld(&first, w); err != nil {
			t.Fatal(err)
		}
		back, err := models.DecodeWorldJSON(first.Bytes(), "")
		if err != nil {
			t.Fatalf("an export does not decode: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if err := models.EncodeWorld(&second, back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("export changed on a round trip:\n%s\n%s", first.Bytes(), second.Bytes())
		}
	})
}
