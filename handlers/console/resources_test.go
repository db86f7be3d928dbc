package console_test

import (
	"net/url"
	"strings"
	"testing"

	"corral/models/store"
)

// TestProviderInventoryAndTraits: the provider page shows capacity, usage
// and free space per class; an admin sets and removes inventory and
// replaces traits, each a generation-checked, audited write.
func TestProviderInventoryAndTraits(t *testing.T) {
	a := newApp(t)
	admin := a.as(a.AdminName)
	numa := "/providers/" + a.providerUUID("numa3_1")
	r := admin.Get(numa)
	if n := r.Count(t, "usage-bar"); n != 2 {
		t.Fatalf("%d usage bars", n)
	}
	if free := r.Texts(t, "inventory-free"); len(free) != 2 {
		t.Errorf("free column %v", free)
	}
	p, err := a.Store.GetProvider(t.Context(), "numa3_1")
	if err != nil {
		t.Fatal(err)
	}
	page := admin.Follow(numa, numa+"/inventory", url.Values{"generation": {gen(p.Generation)}, "class": {"CUSTOM_FPGA"}, "total": {"4"}, "reserved": {"1"}, "allocation_ratio": {"1.0"}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "CUSTOM_FPGA inventory set: 4 total, 1 reserved") {
		t.Errorf("flash %q", got)
	}
	if n := page.Count(t, "usage-bar"); n != 3 {
		t.Errorf("%d usage bars after adding a class", n)
	}
	// A stale generation is refused, and nothing changes.
	page = admin.Follow(numa, numa+"/inventory", url.Values{"generation": {gen(p.Generation)}, "class": {"CUSTOM_FPGA"}, "delete": {"1"}})
	if got := page.Text(t, "flash-error"); !strings.Contains(got, "changed by someone else") {
		t.Errorf("stale: %q", got)
	}
	for _, bad := range []url.Values{
		{"class": {"vcpu"}, "total": {"4"}},
		{"class": {"VCPU"}, "total": {"0"}},
		{"class": {"VCPU"}, "total": {"4"}, "reserved": {"5"}},
		{"class": {"VCPU"}, "total": {"4"}, "allocation_ratio": {"-1"}},
	} {
		bad.Set("generation", gen(p.Generation+1))
		if got := admin.Follow(numa, numa+"/inventory", bad).Text(t, "flash-error"); got == "" {
			t.Errorf("%v accepted", bad)
		}
	}
	page = admin.Follow(numa, numa+"/traits", url.Values{"generation": {gen(p.Generation + 1)}, "traits": {"HW_CPU_X86_AVX2\nCUSTOM_GOLD"}})
	got := page.Doc(t).Find(sel("provider-facts") + " " + sel("trait")).Map(func(_ int, x *goqSel) string { return x.Text() })
	if strings.Join(got, ",") != "CUSTOM_GOLD,HW_CPU_X86_AVX2" {
		t.Errorf("traits %v", got)
	}
	if got := admin.Follow(numa, numa+"/traits", url.Values{"generation": {gen(p.Generation + 2)}, "traits": {"not a trait"}}).Text(t, "flash-error"); got == "" {
		t.Error("bad trait accepted")
	}
	// Readers see no forms, and cannot post.
	rita := a.as("rita")
	if rita.Get(numa).Count(t, "inventory-form") != 0 {
		t.Error("reader sees the inventory form")
	}
	evs, _, err := a.Store.ListAudit(t.Context(), store.AuditQuery{ObjectID: p.UUID})
	if err != nil || len(evs) < 2 {
		t.Errorf("audit: %d events, %v", len(evs), err)
	}
}

// TestFlavorFits: the flavor page says on how many hosts it fits now.
func TestFlavorFits(t *testing.T) {
	a := newApp(t)
	c := a.as("rita")
	fl, err := a.Store.GetFlavor(t.Context(), "m1.small")
	if err != nil {
		t.Fatal(err)
	}
	got := c.Get("/flavors/"+fl.ID).Text(t, "flavor-fits")
	if !strings.HasPrefix(got, "Fits on ") || !strings.Contains(got, "of 8 hosts now") || !strings.Contains(got, "VCPU:1") {
		t.Errorf("fits: %q", got)
	}
}
