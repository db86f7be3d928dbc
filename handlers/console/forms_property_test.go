package console_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"corral/handlers/forms"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
)

// Every console form that writes has one reader (package forms): the
// inline impact previews its changes and the save applies them. This test
// posts random forms — separators of every kind, empty values, unknown
// names, duplicated keys, bad numbers — to both doors and checks that the
// world after the save is the live world with the previewed changes
// applied (scheduling.ApplyChanges), or the live world unchanged when the
// preview refuses the form.

// formCase is one random console form: its reader's kind and target, and
// where the page posts it.
type formCase struct {
	kind, target, action string
	values               url.Values
}

func TestEveryFormSavesWhatItsInlineImpactPreviews(t *testing.T) {
	seed := uint64(19)
	if s, err := strconv.ParseUint(os.Getenv("CORRAL_FORMS_SEED"), 10, 64); err == nil {
		seed = s
	}
	rounds := 40
	if testing.Short() {
		rounds = 3
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	a := newApp(t)
	c := a.as(a.AdminName)
	csrf := c.CSRF("/aggregates/new")
	ctx := context.Background()
	who := forms.Who{Admin: true, User: a.AdminName}
	kinds := map[string]int{}
	for round := range rounds {
		for _, kind := range forms.Kinds {
			snap, _, err := a.Store.Live().Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			before := snap.World()
			fc := randomForm(rng, kind, before)
			label := fmt.Sprintf("round %d %s %s %v", round, fc.kind, fc.target, fc.values)
			read, err := forms.ForImpact(fc.kind, fc.target, fc.values, snap, who)
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			want, applyErr := before, error(nil)
			if !read.Refused() && len(read.Changes) > 0 {
				if want, applyErr = scheduling.ApplyChanges(before, read.Changes); applyErr != nil {
					want = before
				}
			}
			checkInlinePreview(t, c, csrf, fc, read, applyErr, label)
			refused := read.Refused() || len(read.Confirm) > 0 || len(read.Changes) == 0 || applyErr != nil
			if refused {
				want = before
			}
			post := url.Values{}
			for k, v := range fc.values {
				post[k] = slices.Clone(v)
			}
			post.Set("_csrf", csrf)
			if r := c.Confirm(c.Post(fc.action, post), fc.action); r.StatusCode != http.StatusSeeOther {
				t.Fatalf("%s: POST %s answered %d, want 303", label, fc.action, r.StatusCode)
			}
			after, _, err := a.Store.LoadWorld(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, wanted := worldShape(after), worldShape(want)
			if reflect.DeepEqual(got, wanted) {
				if !refused {
					kinds[fc.kind]++
				}
				continue
			}
			if !refused && reflect.DeepEqual(got, worldShape(before)) {
				// The save refused what the preview showed: only a check
				// of the store (a host in two zones, say) may do that.
				if _, err := a.Store.Apply(ctx, store.Actor{Name: "test"}, read.Changes); err == nil {
					t.Errorf("%s: the save changed nothing, but the previewed changes %v apply", label, read.Changes)
				}
				continue
			}
			t.Fatalf("%s: the save made a world other than the preview's\nchanges %+v\ngot  %v\nwant %v", label, read.Changes, diffShapes(got, wanted), diffShapes(wanted, got))
		}
	}
	// The generator must reach the save of every form, not only refusals.
	for _, kind := range forms.Kinds {
		if kinds[kind] == 0 && !testing.Short() {
			t.Errorf("no round saved a %s form", kind)
		}
	}
}

// checkInlinePreview posts the form to the inline impact and checks it
// shows the reader's changes, or its refusal.
func checkInlinePreview(t *testing.T, c *client, csrf string, fc formCase, read forms.Read, applyErr error, label string) {
	t.Helper()
	v := url.Values{}
	for k, vals := range fc.values {
		v[k] = slices.Clone(vals)
	}
	v.Set("impact_form", fc.kind)
	v.Set("impact_target", fc.target)
	v.Set("_csrf", csrf)
	r := c.Post("/impact/inline", v)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("%s: inline impact answered %d: %s", label, r.StatusCode, r.Doc(t).Find("main h1, main p").Text())
	}
	switch {
	case read.Refused():
		if !r.Has(t, "inline-impact-error") {
			t.Errorf("%s: the save refuses (%s) but the preview shows no error: %q", label, read.FirstError(), r.Words(t, "inline-impact"))
		}
	case applyErr != nil:
		if got := r.Text(t, "inline-impact-error"); !strings.Contains(got, errorMessage(applyErr)) {
			t.Errorf("%s: the changes do not apply (%v) but the preview says %q", label, applyErr, r.Words(t, "inline-impact"))
		}
	case len(read.Changes) == 0:
		if !r.Has(t, "inline-impact-none") {
			t.Errorf("%s: the form changes nothing but the preview says %q", label, r.Words(t, "inline-impact"))
		}
	default:
		var described []string
		for _, ch := range read.Changes {
			described = append(described, scheduling.DescribeChange(ch))
		}
		if got := r.Text(t, "inline-impact-summary"); !strings.Contains(got, strings.Join(described, "; ")) {
			t.Errorf("%s: preview %q does not list the changes %q", label, got, described)
		}
	}
}

// The regression of issue 19: pasting "cn1;cn2" saved two hosts while the
// preview showed no change.
func TestPastedMembersWithSemicolonsPreviewAsSaved(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	cn1, cn2 := a.providerUUID("cn1"), a.providerUUID("cn2")
	aggs, _, err := a.Store.ListAggregateSummaries(context.Background(), store.AggregateQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var agg *models.Aggregate
	for i := range aggs {
		if x := a.aggregate(aggs[i].UUID); !slices.Contains(x.Members, cn1) && !slices.Contains(x.Members, cn2) {
			agg = x
			break
		}
	}
	if agg == nil {
		t.Fatal("every aggregate holds cn1 or cn2")
	}
	csrf := c.CSRF("/aggregates/" + agg.UUID)
	form := url.Values{"bulk": {"cn1;cn2"}, "generation": {gen(agg.Generation)}, "_csrf": {csrf}}
	preview := url.Values{"impact_form": {forms.KindMembers}, "impact_target": {agg.UUID}}
	for k, v := range form {
		preview[k] = v
	}
	r := c.Post("/impact/inline", preview)
	if got := r.Text(t, "inline-impact-summary"); !strings.Contains(got, "add cn1 to aggregate "+agg.Name+"; add cn2 to aggregate "+agg.Name) {
		t.Fatalf("preview of cn1;cn2 = %q (%s)", got, r.Words(t, "inline-impact"))
	}
	if r := c.Post("/aggregates/"+agg.UUID+"/members", form); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d", r.StatusCode)
	}
	after := a.aggregate(agg.UUID)
	if n := len(after.Members) - len(agg.Members); n != 2 {
		t.Errorf("the save added %d members, want cn1 and cn2", n)
	}
}

// randomForm builds a random form of kind about a random object of w.
func randomForm(rng *rand.Rand, kind string, w *models.World) formCase {
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	agg := &w.Aggregates[rng.IntN(len(w.Aggregates))]
	fc := formCase{kind: kind, target: agg.UUID, values: url.Values{"generation": {gen(agg.Generation)}}}
	aggPath := "/aggregates/" + agg.UUID
	var providers []string
	for _, p := range w.Providers {
		providers = append(providers, p.Name, p.UUID)
	}
	providers = append(providers, "nosuch", "", "cn1")
	sep := func() string { return pick([]string{",", ";", " ", "\n", "\t", ", ", "\r\n", ";;"}) }
	list := func(from []string, n int) string {
		var parts []string
		for range n {
			parts = append(parts, pick(from))
		}
		return strings.Join(parts, sep())
	}
	fresh := "new-" + strconv.Itoa(rng.IntN(100000))
	names := []string{"fresh", "aggA", agg.Name, "", "  ", "x" + strings.Repeat("y", 260), fresh, fresh, fresh}
	zones := []string{"", "east", "west", "north", "a:b", zoneOf(agg)}
	// Deletes are rarer, to keep flavors and groups to edit.
	if kind == forms.KindFlavorDelete && (len(w.Flavors) < 6 || rng.IntN(3) > 0) {
		kind = forms.KindFlavor
	}
	if kind == forms.KindGroupDelete && (len(w.ServerGroups) < 3 || rng.IntN(3) > 0) {
		kind = forms.KindGroupMembers
	}
	fc.kind = kind
	switch kind {
	case forms.KindAggregateNew:
		fc.action, fc.target = "/aggregates", ""
		fc.values = url.Values{"name": {pick(names)}, "availability_zone": {pick(zones)}, "hosts": {list(providers, rng.IntN(4))}}
		if rng.IntN(3) > 0 {
			fc.values.Set("confirm_az", "1")
		}
	case forms.KindZone:
		fc.action = aggPath
		fc.values.Set("name", pick(append(names, agg.Name, agg.Name)))
		fc.values.Set("availability_zone", pick(zones))
		if rng.IntN(3) > 0 {
			fc.values.Set("confirm_az", "1")
		}
	case forms.KindMetadata:
		fc.action = aggPath + "/metadata"
		keys := append(slices.Sorted(maps.Keys(agg.Metadata)), "colour", "", "availability_zone", "filter_tenant_id9",
			w.Settings.RequiredMemberPrefix+"r9", "aggregate_instance_extra_specs:ssd", "colour", " spaced ")
		for range rng.IntN(5) {
			fc.values.Add("key", pick(keys))
			fc.values.Add("value", pick([]string{"", "true", "blue", "a,b", "  x ", agg.Metadata[pick(keys)]}))
		}
	case forms.KindTenants, forms.KindTenantsRemove:
		fc.action = aggPath + "/tenants"
		projects := append(scheduling.TenantTags(agg.Metadata), "acme", "globex", "", "p1,p2", "p 1", "bad/id", "initech")
		if kind == forms.KindTenantsRemove {
			fc.action += "/remove"
			fc.values.Set("value", pick(projects))
		} else {
			fc.values.Set("project", pick(projects))
			if rng.IntN(4) == 0 {
				fc.values.Set("split", "1")
			}
		}
	case forms.KindReservations, forms.KindReservationsRemove:
		fc.action = aggPath + "/reservations"
		ids := append(scheduling.ReservationTags(agg.Metadata, w.Settings.RequiredMemberPrefix), "r42", "freepool", "", "bad id", "r;1")
		if kind == forms.KindReservationsRemove {
			fc.action += "/remove"
			fc.values.Set("value", pick(ids))
		} else {
			fc.values.Set("reservation", pick(ids))
		}
	case forms.KindMembers:
		fc.action = aggPath + "/members"
		for range rng.IntN(3) {
			fc.values.Add("provider", pick(providers))
		}
		fc.values.Set("bulk", list(providers, rng.IntN(4)))
	case forms.KindMembersRemove:
		fc.action = aggPath + "/members/remove"
		for range rng.IntN(4) {
			fc.values.Add("provider", pick(append(slices.Clone(agg.Members), providers...)))
		}
	case forms.KindAggregateDel:
		// Half the time one without hosts, which can go.
		for i := range w.Aggregates {
			if x := &w.Aggregates[i]; rng.IntN(2) == 0 && !slices.ContainsFunc(x.Members, func(m string) bool { return isHost(w, m) }) {
				fc.target, fc.values = x.UUID, url.Values{"generation": {gen(x.Generation)}}
				aggPath = "/aggregates/" + x.UUID
				break
			}
		}
		fc.action = aggPath + "/delete"
	default:
		return randomOtherForm(rng, pick, list, fc, w)
	}
	return fc
}

// randomOtherForm builds the flavor, server-group and provider forms.
func randomOtherForm(rng *rand.Rand, pick func([]string) string, list func([]string, int) string, fc formCase, w *models.World) formCase {
	switch fc.kind {
	case forms.KindFlavorNew:
		fc.action, fc.target = "/flavors", ""
		fc.values = url.Values{"name": {pick([]string{"f-new", "", " ", w.Flavors[0].Name, "f" + strconv.Itoa(rng.IntN(1000))})},
			"vcpus": {pick([]string{"1", "4", "0", "x", ""})}, "ram_mb": {pick([]string{"2048", "512", "-1"})}, "disk_gb": {pick([]string{"0", "20", "x"})}}
		for range rng.IntN(3) {
			fc.values.Add("key", pick([]string{"hw:cpu_policy", "aggregate_instance_extra_specs:ssd", "", "trait:CUSTOM_X"}))
			fc.values.Add("value", pick([]string{"", "true", "dedicated", "required"}))
		}
	case forms.KindFlavorDelete:
		f := &w.Flavors[rng.IntN(len(w.Flavors))]
		fc.target, fc.action = f.ID, "/flavors/"+url.PathEscape(f.ID)+"/delete"
		fc.values = url.Values{}
	case forms.KindFlavor:
		f := &w.Flavors[rng.IntN(len(w.Flavors))]
		fc.target, fc.action = f.ID, "/flavors/"+url.PathEscape(f.ID)
		fc.values = url.Values{"generation": {gen(f.Generation)}, "name": {pick([]string{f.Name, f.Name, f.Name + "-b", w.Flavors[0].Name, ""})},
			"vcpus":  {pick([]string{strconv.Itoa(f.VCPUs), strconv.Itoa(f.VCPUs), strconv.Itoa(f.VCPUs + 1)})},
			"ram_mb": {pick([]string{strconv.Itoa(f.RAMMB), strconv.Itoa(f.RAMMB), "x", "0"})}, "disk_gb": {strconv.Itoa(f.DiskGB)}}
		keys := append(slices.Sorted(maps.Keys(f.ExtraSpecs)), "hw:cpu_policy", "aggregate_instance_extra_specs:ssd",
			"trait:CUSTOM_X", "", "resources:VCPU", "hw:cpu_policy")
		for range rng.IntN(5) {
			fc.values.Add("key", pick(keys))
			fc.values.Add("value", pick([]string{"", "true", "dedicated", "required", "2", "x", f.ExtraSpecs[pick(keys)]}))
		}
	case forms.KindGroupNew:
		fc.action, fc.target = "/server-groups", ""
		fc.values = url.Values{"name": {pick([]string{"g-new", "", "web", "g" + strconv.Itoa(rng.IntN(100)), "g-new"})},
			"policy":              {pick(append(slices.Clone(forms.Policies), "bogus", ""))},
			"max_server_per_host": {pick([]string{"", "", "2", "0", "-1", "x", "1.5"})},
			"project":             {pick([]string{"acme", "globex", ""})}}
	case forms.KindGroupMembers, forms.KindGroupRemove, forms.KindGroupDelete:
		if len(w.ServerGroups) == 0 {
			return randomForm(rng, forms.KindGroupNew, w)
		}
		g := &w.ServerGroups[rng.IntN(len(w.ServerGroups))]
		for i := range w.ServerGroups {
			if len(w.ServerGroups[i].Members) > 0 && rng.IntN(2) == 0 {
				g = &w.ServerGroups[i]
			}
		}
		fc.target = g.UUID
		fc.values = url.Values{"generation": {gen(g.Generation)}}
		var servers []string
		for _, s := range w.Servers {
			servers = append(servers, s.Name, s.UUID)
		}
		servers = append(servers, "nosuch", "")
		switch fc.kind {
		case forms.KindGroupMembers:
			fc.action = "/server-groups/" + g.UUID + "/members"
			fc.values.Set("servers", list(servers, rng.IntN(3)))
		case forms.KindGroupRemove:
			fc.action = "/server-groups/" + g.UUID + "/members/remove"
			for range rng.IntN(3) {
				fc.values.Add("server", pick(append(slices.Clone(g.Members), servers...)))
			}
			if len(g.Members) > 0 && rng.IntN(2) == 0 {
				fc.values.Add("server", pick(g.Members))
			}
		default:
			fc.action = "/server-groups/" + g.UUID + "/delete"
		}
	case forms.KindProviderTraits, forms.KindInventory:
		p := &w.Providers[rng.IntN(len(w.Providers))]
		fc.target = p.UUID
		fc.values = url.Values{"generation": {gen(p.Generation)}}
		if fc.kind == forms.KindProviderTraits {
			fc.action = "/providers/" + p.UUID + "/traits"
			traits := append(slices.Clone(p.Traits), "CUSTOM_A", "HW_CPU_X86_AVX2", "bad-trait", "", "COMPUTE_STATUS_DISABLED")
			fc.values.Set("traits", strings.Join(strings.Split(list(traits, rng.IntN(5)), ";"), pick([]string{"\n", ",", "\r\n"})))
		} else {
			fc.action = "/providers/" + p.UUID + "/inventory"
			fc.values.Set("class", pick(append(slices.Sorted(maps.Keys(p.Inventories)), "CUSTOM_FPGA", "bad class", "")))
			fc.values.Set("total", pick([]string{"", "x", "0", "8", "64", "-1", "99999999999"}))
			fc.values.Set("reserved", pick([]string{"", "0", "2", "x", "100"}))
			fc.values.Set("allocation_ratio", pick([]string{"", "1", "1.5", "0", "abc", "16"}))
			if rng.IntN(4) == 0 {
				fc.values.Set("delete", "1")
			}
		}
	default:
		panic("no generator for form " + fc.kind)
	}
	return fc
}

func isHost(w *models.World, uuid string) bool {
	for i := range w.Providers {
		if w.Providers[i].UUID == uuid {
			return w.Providers[i].IsHost()
		}
	}
	return false
}

func zoneOf(a *models.Aggregate) string {
	if a.AvailabilityZone == nil {
		return ""
	}
	return *a.AvailabilityZone
}

// worldShape is what the forms can change, keyed by what survives a
// create (names, not the UUIDs a create picks): one line per object.
func worldShape(w *models.World) map[string]string {
	out := map[string]string{}
	names := map[string]string{}
	for _, p := range w.Providers {
		names[p.UUID] = p.Name
		inv := map[string]string{}
		for rc, v := range p.Inventories {
			inv[rc] = fmt.Sprintf("%d/%d/%g", v.Total, v.Reserved, v.AllocationRatio)
		}
		out["provider "+p.UUID] = fmt.Sprintf("traits=%v inventories=%v", slices.Sorted(slices.Values(p.Traits)), inv)
	}
	for _, a := range w.Aggregates {
		var members []string
		for _, m := range a.Members {
			members = append(members, names[m])
		}
		slices.Sort(members)
		out["aggregate "+a.Name] = fmt.Sprintf("zone=%q metadata=%v members=%v", zoneOf(&a), a.Metadata, members)
	}
	for _, f := range w.Flavors {
		out["flavor "+f.Name] = fmt.Sprintf("%d/%d/%d specs=%v", f.VCPUs, f.RAMMB, f.DiskGB, f.ExtraSpecs)
	}
	groups := map[string][]string{}
	for _, g := range w.ServerGroups {
		members := slices.Sorted(slices.Values(g.Members))
		key := "group " + g.ProjectID + "/" + g.Name
		groups[key] = append(groups[key], fmt.Sprintf("%s rules=%v members=%v user=%s", g.Policy, g.Rules, members, g.UserID))
	}
	for k, v := range groups {
		slices.Sort(v)
		out[k] = strings.Join(v, " | ")
	}
	return out
}

// diffShapes lists the lines of a that b does not have.
func diffShapes(a, b map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if b[k] != a[k] {
			out = append(out, k+": "+a[k])
		}
	}
	return out
}

// errorMessage is a corral error's message without its field prefix, as
// the inline impact shows it.
func errorMessage(err error) string {
	var ce *models.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		return ce.Msg
	}
	return err.Error()
}
