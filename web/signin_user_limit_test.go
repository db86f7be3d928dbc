package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"corral/web"
)

// TestSignInLimitPerUser: wrong passwords for one user from many
// addresses (each within its own allowance) are stopped by a limit per
// user name, with a message saying so; the user still signs in from a
// browser they signed in with before, so the limit cannot be aimed at
// them.
func TestSignInLimitPerUser(t *testing.T) {
	loopback, err := web.ParseTrustedProxies("127.0.0.0/8, ::1")
	if err != nil {
		t.Fatal(err)
	}
	a := newAppWith(t, web.Config{TrustedProxies: loopback})
	known := a.Client(t)
	login(known, "mike") // this browser has signed in as mike before
	known.Submit("/", "/logout", nil)

	attacker := a.Client(t)
	tok := attacker.CSRF("/login")
	statuses := map[int]int{}
	var last string
	for i := range 60 {
		r := attacker.Post("/login", url.Values{"name": {"mike"}, "password": {"guess"}, "_csrf": {tok}},
			"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1))
		statuses[r.StatusCode]++
		last = r.ErrorsText()
	}
	if statuses[http.StatusTooManyRequests] < 45 || statuses[http.StatusUnauthorized] > 15 {
		t.Errorf("60 wrong passwords for mike from 60 addresses: %v; want most refused as too many", statuses)
	}
	if !strings.Contains(last, "Too many failed sign-ins for this user name") {
		t.Errorf("the refusal says %q", last)
	}
	// A fresh browser meets the limit even with the right password…
	if r := a.Client(t).Login("mike", testPassword); r.StatusCode != http.StatusTooManyRequests {
		t.Errorf("mike from a new browser during the attack: %d, want 429", r.StatusCode)
	}
	// …but the browser mike used before is let through.
	if r := known.Login("mike", testPassword); r.StatusCode != http.StatusSeeOther {
		t.Errorf("mike from his own browser during the attack: %d %q, want 303", r.StatusCode, r.ErrorsText())
	}
	// Other users are not affected.
	if r := a.Client(t).Login("rita", testPassword); r.StatusCode != http.StatusSeeOther {
		t.Errorf("rita during the attack on mike: %d, want 303", r.StatusCode)
	}
}
