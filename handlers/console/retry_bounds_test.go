package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A refused paste of hundreds of names comes back to a short address, and
// the page it leads to still says why the paste was refused and that the
// list must be pasted again.
func TestRefusedLongPasteKeepsTheAddressShortAndTheMessage(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	agg := a.aggregate("aggC")
	path := "/aggregates/" + agg.UUID
	var names []string
	for i := 0; len(strings.Join(names, "\n")) < 39*1024; i++ {
		names = append(names, fmt.Sprintf("no-such-host-%05d", i))
	}
	r := c.Submit(path, path+"/members", url.Values{"bulk": {strings.Join(names, "\n")}, "generation": {gen(agg.Generation)}})
	loc := r.Header.Get("Location")
	if r.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "retry=members") {
		t.Fatalf("status %d, location %.200q", r.StatusCode, loc)
	}
	if len(loc) >= 2048 {
		t.Fatalf("the retry address is %d bytes long", len(loc))
	}
	page := c.Get(loc)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", loc, page.StatusCode)
	}
	if !strings.Contains(page.Body, "No such provider: no-such-host-00000") || !strings.Contains(page.Body, "paste it again") {
		t.Errorf("the page lost the message: %s", page.Body)
	}
	if got := a.aggregate(agg.UUID).Members; len(got) != len(agg.Members) {
		t.Errorf("members changed: %v", got)
	}
}
