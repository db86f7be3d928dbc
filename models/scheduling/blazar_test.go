package scheduling

import (
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

// blazarWorldJSON is a cloud as Blazar leaves it: a free pool (cn1, cn2 and
// cn3), a host reservation r-host whose host cn4 has left the free pool, an
// instance reservation r-inst whose host cn3 stays in the free pool
// (stay_in=True) with the flavor Blazar made for it, and cn5 outside Blazar.
// Names, keys and values are those blazar/utils/openstack/nova.py and the
// oshosts and instances plugins write.
const blazarWorldJSON = `{
  "format": "corral.world/v1",
  "providers": [{"name": "cn1"}, {"name": "cn2"}, {"name": "cn3"}, {"name": "cn4"}, {"name": "cn5"}],
  "aggregates": [
    {"name": "freepool", "metadata": {}, "members": ["cn1", "cn2", "cn3"]},
    {"name": "r-host", "availability_zone": "blazar_r-host",
     "metadata": {"blazar:owner": "p-host", "p-extra": "blazar:project"}, "members": ["cn4"]},
    {"name": "r-inst",
     "metadata": {"reservation": "r-inst", "filter_tenant_id": "p-inst", "blazar:owner": "p-inst"},
     "members": ["cn3"]}
  ],
  "flavors": [
    {"name": "m1.small", "vcpus": 1, "ram_mb": 2048, "disk_gb": 20},
    {"id": "r-inst", "name": "reservation:r-inst", "vcpus": 2, "ram_mb": 4096, "disk_gb": 40,
     "extra_specs": {"aggregate_instance_extra_specs:reservation": "r-inst",
                     "resources:CUSTOM_RESERVATION_R_INST": "1"}}
  ]
}`

func blazarWorld(t testing.TB) *models.World {
	t.Helper()
	w, err := models.DecodeWorldJSON([]byte(blazarWorldJSON), "")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func encodeBlazar(t testing.TB, w *models.World) string {
	t.Helper()
	var b strings.Builder
	if err := models.EncodeWorld(&b, w); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func blazarAgg(t testing.TB, w *models.World, name string) map[string]string {
	t.Helper()
	if a := aggByName(w, name); a != nil {
		return a.Metadata
	}
	t.Fatalf("no aggregate %s", name)
	return nil
}

func blazarFlavor(t testing.TB, w *models.World, name string) map[string]string {
	t.Helper()
	for _, f := range w.Flavors {
		if f.Name == name {
			return f.ExtraSpecs
		}
	}
	t.Fatalf("no flavor %s", name)
	return nil
}

func TestTranslateBlazar(t *testing.T) {
	defaults := models.DefaultSettings()
	split := defaults
	split.RequiredMemberPrefix, split.DefaultForbiddenMemberPrefix = "resv:", "blocked:"
	forbidOnly := defaults
	forbidOnly.RequiredMemberPrefix = ""
	off := defaults
	off.RequiredMemberPrefix, off.DefaultForbiddenMemberPrefix = "", ""

	cases := []struct {
		name     string
		settings models.Settings
		adjust   func(w *models.World)
		lines    []string
		aggs     map[string]map[string]string // metadata after, by aggregate name
		flavor   map[string]string            // reservation:r-inst's extra specs after
	}{
		{
			name:     "default prefixes",
			settings: defaults,
			lines: []string{
				"aggregate freepool: Blazar free pool → reservation:freepool",
				"aggregate r-host: availability zone blazar_r-host → reservation:r-host",
				"aggregate r-host: blazar:owner=p-host → filter_tenant_id=p-host",
				"aggregate r-host: p-extra=blazar:project → filter_tenant_id2=p-extra",
				"aggregate r-inst: reservation=r-inst → reservation:r-inst",
				"flavor reservation:r-inst: aggregate_instance_extra_specs:reservation=r-inst → reservation:r-inst",
			},
			aggs: map[string]map[string]string{
				"freepool": {"reservation:freepool": "true"},
				"r-host": {"blazar:owner": "p-host", "p-extra": "blazar:project", "reservation:r-host": "true",
					"filter_tenant_id": "p-host", "filter_tenant_id2": "p-extra"},
				// The owner is already the tenant: no second key.
				"r-inst": {"reservation": "r-inst", "filter_tenant_id": "p-inst", "blazar:owner": "p-inst", "reservation:r-inst": "true"},
			},
			flavor: map[string]string{"aggregate_instance_extra_specs:reservation": "r-inst",
				"resources:CUSTOM_RESERVATION_R_INST": "1", "reservation:r-inst": "true"},
		},
		{
			name:     "different prefixes give both keys",
			settings: split,
			lines: []string{
				"aggregate freepool: Blazar free pool → resv:freepool",
				"aggregate freepool: Blazar free pool → blocked:freepool",
				"aggregate r-host: availability zone blazar_r-host → resv:r-host",
				"aggregate r-host: availability zone blazar_r-host → blocked:r-host",
				"aggregate r-host: blazar:owner=p-host → filter_tenant_id=p-host",
				"aggregate r-host: p-extra=blazar:project → filter_tenant_id2=p-extra",
				"aggregate r-inst: reservation=r-inst → resv:r-inst",
				"aggregate r-inst: reservation=r-inst → blocked:r-inst",
				"flavor reservation:r-inst: aggregate_instance_extra_specs:reservation=r-inst → resv:r-inst",
				"flavor reservation:r-inst: aggregate_instance_extra_specs:reservation=r-inst → blocked:r-inst",
			},
			aggs: map[string]map[string]string{
				"freepool": {"resv:freepool": "true", "blocked:freepool": "true"},
				"r-inst": {"reservation": "r-inst", "filter_tenant_id": "p-inst", "blazar:owner": "p-inst",
					"resv:r-inst": "true", "blocked:r-inst": "true"},
			},
			flavor: map[string]string{"aggregate_instance_extra_specs:reservation": "r-inst",
				"resources:CUSTOM_RESERVATION_R_INST": "1", "resv:r-inst": "true", "blocked:r-inst": "true"},
		},
		{
			name:     "only the forbidden prefix",
			settings: forbidOnly,
			lines: []string{
				"aggregate freepool: Blazar free pool → reservation:freepool",
				"aggregate r-host: availability zone blazar_r-host → reservation:r-host",
				"aggregate r-host: blazar:owner=p-host → filter_tenant_id=p-host",
				"aggregate r-host: p-extra=blazar:project → filter_tenant_id2=p-extra",
				"aggregate r-inst: reservation=r-inst → reservation:r-inst",
				"flavor reservation:r-inst: aggregate_instance_extra_specs:reservation=r-inst → reservation:r-inst",
			},
		},
		{
			name:     "reservation filter off",
			settings: off,
			aggs: map[string]map[string]string{
				"freepool": {},
				"r-host":   {"blazar:owner": "p-host", "p-extra": "blazar:project"},
			},
			flavor: map[string]string{"aggregate_instance_extra_specs:reservation": "r-inst", "resources:CUSTOM_RESERVATION_R_INST": "1"},
		},
		{
			name:     "tags already present are kept as they are",
			settings: defaults,
			adjust: func(w *models.World) {
				aggByName(w, "freepool").Metadata["reservation:freepool"] = "freepool"
				a := aggByName(w, "r-host")
				a.Metadata["reservation:r-host"] = "r-host"
				a.Metadata["filter_tenant_id7"] = "p-extra"
				a.Metadata["filter_tenant_id"] = "p-other"
				w.Flavors[1].ExtraSpecs["reservation:r-inst"] = "yes"
			},
			lines: []string{
				"aggregate r-host: blazar:owner=p-host → filter_tenant_id2=p-host",
				"aggregate r-inst: reservation=r-inst → reservation:r-inst",
			},
			aggs: map[string]map[string]string{
				"freepool": {"reservation:freepool": "freepool"},
				"r-host": {"blazar:owner": "p-host", "p-extra": "blazar:project", "reservation:r-host": "r-host",
					"filter_tenant_id": "p-other", "filter_tenant_id7": "p-extra", "filter_tenant_id2": "p-host"},
			},
			flavor: map[string]string{"aggregate_instance_extra_specs:reservation": "r-inst",
				"resources:CUSTOM_RESERVATION_R_INST": "1", "reservation:r-inst": "yes"},
		},
		{
			name:     "legacy availability zone, no owner, blank reservation value",
			settings: defaults,
			adjust: func(w *models.World) {
				az := "blazar:r-old"
				a := aggByName(w, "r-host")
				a.AvailabilityZone = &az
				a.Metadata = nil
				w.Aggregates[2].Metadata = map[string]string{"reservation": "  "}
				w.Flavors[1].ExtraSpecs["aggregate_instance_extra_specs:reservation"] = " "
			},
			lines: []string{
				"aggregate freepool: Blazar free pool → reservation:freepool",
				"aggregate r-host: availability zone blazar:r-old → reservation:r-old",
			},
			aggs: map[string]map[string]string{
				"r-host": {"reservation:r-old": "true"},
				"r-inst": {"reservation": "  "},
			},
		},
		{
			name:     "an aggregate outside Blazar is left alone",
			settings: defaults,
			adjust: func(w *models.World) {
				az := "az1"
				a := aggByName(w, "r-host")
				a.AvailabilityZone = &az
				a.Name = "rack1"
				w.Aggregates = w.Aggregates[1:2]
				w.Flavors = w.Flavors[:1]
			},
			aggs: map[string]map[string]string{
				"rack1": {"blazar:owner": "p-host", "p-extra": "blazar:project"},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := blazarWorld(t)
			if c.adjust != nil {
				c.adjust(in)
			}
			before := encodeBlazar(t, in)
			out, lines := TranslateBlazar(in, c.settings)
			if !reflect.DeepEqual(lines, c.lines) {
				t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(c.lines, "\n"))
			}
			for name, want := range c.aggs {
				if got := blazarAgg(t, out, name); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Errorf("aggregate %s metadata %v, want %v", name, got, want)
				}
			}
			if c.flavor != nil {
				if got := blazarFlavor(t, out, "reservation:r-inst"); !reflect.DeepEqual(got, c.flavor) {
					t.Errorf("flavor extra specs %v, want %v", got, c.flavor)
				}
			}
			if encodeBlazar(t, in) != before {
				t.Error("the input world was modified")
			}
			// Everything but metadata and extra specs is carried over.
			if len(out.Providers) != len(in.Providers) || len(out.Aggregates) != len(in.Aggregates) ||
				len(out.Flavors) != len(in.Flavors) || !reflect.DeepEqual(out.Settings, in.Settings) {
				t.Errorf("translated world lost objects: %d providers, %d aggregates, %d flavors",
					len(out.Providers), len(out.Aggregates), len(out.Flavors))
			}
			for i := range out.Aggregates {
				if a, b := out.Aggregates[i], in.Aggregates[i]; a.UUID != b.UUID || !reflect.DeepEqual(a.Members, b.Members) {
					t.Errorf("aggregate %s changed beyond its metadata", a.Name)
				}
			}
			// A second pass finds everything already said.
			again, more := TranslateBlazar(out, c.settings)
			if len(more) != 0 || !reflect.DeepEqual(again, out) {
				t.Errorf("translating twice added %q", more)
			}
		})
	}
}

func TestTranslateBlazarCopies(t *testing.T) {
	if w, lines := TranslateBlazar(nil, models.DefaultSettings()); w != nil || lines != nil {
		t.Errorf("nil world: %v, %q", w, lines)
	}
	in := blazarWorld(t)
	out, _ := TranslateBlazar(in, models.DefaultSettings())
	// The copy shares no mutable part with the input.
	out.Aggregates[0].Members[0] = "changed"
	*out.Aggregates[1].AvailabilityZone = "changed"
	out.Flavors[0].Name = "changed"
	out.Providers[0].Name = "changed"
	out.Settings.EnabledFilters[0] = "changed"
	if in.Aggregates[0].Members[0] == "changed" || *in.Aggregates[1].AvailabilityZone == "changed" ||
		in.Flavors[0].Name == "changed" || in.Providers[0].Name == "changed" || in.Settings.EnabledFilters[0] == "changed" {
		t.Error("the translated world shares state with the input")
	}
}

// TestTranslateBlazarPipeline runs requests through the whole pipeline on
// the Blazar-shaped cloud, before and after translation, with the default
// settings (both prefixes reservation:, AggregateInstanceExtraSpecsFilter
// and AggregateMultiTenancyIsolation on). After translation a plain flavor
// stays off the free pool and every reserved host; a reservation's flavor
// lands on its hosts only, and only for the projects it belongs to.
func TestTranslateBlazarPipeline(t *testing.T) {
	raw := blazarWorld(t)
	translated, _ := TranslateBlazar(raw, raw.Settings)
	hostFlavor := FlavorRef{Inline: &models.Flavor{Name: "host-r", VCPUs: 1, ExtraSpecs: map[string]string{"reservation:r-host": "true"}}}
	cases := []struct {
		name    string
		world   *models.World
		project string
		flavor  FlavorRef
		hosts   string
	}{
		// Before: nothing keeps a plain flavor off Blazar's hosts except
		// r-inst's tenant key.
		{"raw: plain flavor", raw, "p-any", FlavorRef{Name: "m1.small"}, "cn1 cn2 cn4 cn5"},
		{"plain flavor", translated, "p-any", FlavorRef{Name: "m1.small"}, "cn5"},
		{"plain flavor, reservation owner", translated, "p-host", FlavorRef{Name: "m1.small"}, "cn5"},
		{"instance reservation, owner", translated, "p-inst", FlavorRef{Name: "reservation:r-inst"}, "cn3"},
		{"instance reservation, by flavor id", translated, "p-inst", FlavorRef{Name: "r-inst"}, "cn3"},
		{"instance reservation, other project", translated, "p-any", FlavorRef{Name: "reservation:r-inst"}, ""},
		{"host reservation, owner", translated, "p-host", hostFlavor, "cn4"},
		{"host reservation, extra project", translated, "p-extra", hostFlavor, "cn4"},
		{"host reservation, other project", translated, "p-any", hostFlavor, ""},
		// Before translation no aggregate carries reservation:r-host.
		{"raw: host reservation", raw, "p-host", hostFlavor, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewSnapshot(c.world)
			if err != nil {
				t.Fatal(err)
			}
			tr := mustRun(t, s, &RequestSpec{ProjectID: c.project, Flavor: c.flavor})
			if got := passingHosts(tr); got != c.hosts {
				t.Errorf("passing hosts %q, want %q (query %s)", got, c.hosts, tr.PlacementQuery)
			}
			if (c.hosts == "") != (tr.Error != nil) {
				t.Errorf("error %v with passing hosts %q", tr.Error, c.hosts)
			}
		})
	}
}
