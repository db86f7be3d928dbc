package models_test

import (
	"reflect"
	"testing"

	"corral/models"
)

// TestWorldValidate: a world built in code (no document, so every field
// counts as given) gets the same index-named answers as a decoded file,
// and Validate changes nothing.
func TestWorldValidate(t *testing.T) {
	a, b := "0b5a4c1e-0000-4000-8000-0000000000a1", "0b5a4c1e-0000-4000-8000-0000000000b2"
	good := func() *models.World {
		return &models.World{
			Providers:    []models.Provider{{UUID: a, Name: "cn1"}, {UUID: b, Name: "cn2", ParentUUID: &a}},
			Aggregates:   []models.Aggregate{{Name: "x", Members: []string{a}}},
			Flavors:      []models.Flavor{{Name: "f", VCPUs: 1}},
			Servers:      []models.Server{{UUID: b, Name: "s", Host: "cn1"}},
			ServerGroups: []models.ServerGroup{{Name: "g", Policy: models.PolicyAntiAffinity, Members: []string{b}}},
			Settings:     models.DefaultSettings(),
		}
	}
	w := good()
	if err := w.Validate(); err != nil {
		t.Fatalf("a good world: %v", err)
	}
	if !reflect.DeepEqual(w, good()) {
		t.Error("Validate changed the world")
	}
	for _, tc := range []struct {
		name  string
		spoil func(w *models.World)
		field string
	}{
		{"bad uuid", func(w *models.World) { w.Providers[1].UUID = "nope" }, "providers[1].uuid"},
		{"uuid twice", func(w *models.World) { w.Providers[1].UUID = a }, "providers[1].uuid"},
		{"parent cycle", func(w *models.World) { w.Providers[0].ParentUUID = &b }, "providers[0].parent"},
		{"long name", func(w *models.World) { w.Providers[0].Name = string(make([]byte, 201)) }, "providers[0].name"},
		{"flavor id twice", func(w *models.World) {
			w.Flavors = append(w.Flavors, models.Flavor{ID: "1", Name: "g"}, models.Flavor{ID: "1", Name: "h"})
		}, "flavors[2].id"},
		{"access list of a public flavor", func(w *models.World) { w.Flavors[0].Projects = []string{"p"} }, "flavors[0].projects"},
		{"server uuid twice", func(w *models.World) { w.Servers = append(w.Servers, w.Servers[0]) }, "servers[1].uuid"},
		{"unknown policy", func(w *models.World) { w.ServerGroups[0].Policy = "sideways" }, "server_groups[0].policy"},
		{"rule below 1", func(w *models.World) { w.ServerGroups[0].Rules = map[string]int{models.RuleMaxServerPerHost: 0} }, "server_groups[0].rules"},
		{"filter twice", func(w *models.World) {
			w.Settings.EnabledFilters = append(w.Settings.EnabledFilters, w.Settings.EnabledFilters[0])
		}, "settings.enabled_filters"},
		{"consumer without uuid", func(w *models.World) { w.Consumers = []models.Consumer{{}} }, "allocations[0].consumer"},
	} {
		w := good()
		tc.spoil(w)
		err := w.Validate()
		if models.KindOf(err) != models.Invalid || models.FieldOf(err) != tc.field {
			t.Errorf("%s: %v (%v %q), want invalid %q", tc.name, err, models.KindOf(err), models.FieldOf(err), tc.field)
		}
	}
}
