package web_test

import (
	"net/http"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/web"
	"corral/web/webtest"
)

// The app under test is the real one (webtest: the whole Echo stack on a
// SQLite file, over loopback HTTP) with a clock the tests move, and three
// users: alice (admin), mike (member of tA) and rita (reader in tB).
type (
	testApp  = webtest.App
	client   = webtest.Client
	response = webtest.Response
)

const testPassword = "correct horse battery"

func newApp(t testing.TB) *testApp {
	t.Helper()
	return newAppWith(t, web.Config{})
}

func newAppWith(t testing.TB, cfg web.Config) *testApp {
	t.Helper()
	return newAppOn(t, nil, cfg)
}

// newAppOn is newAppWith on a given store (storetest.ForEach gives both
// databases); nil opens a fresh SQLite file.
func newAppOn(t testing.TB, st *store.Store, cfg web.Config) *testApp {
	t.Helper()
	return webtest.StartWith(t, webtest.Options{Store: st, Clock: true, Config: cfg, Users: []webtest.User{
		{Name: "alice", Role: models.RoleAdmin, Password: testPassword},
		{Name: "mike", Role: models.RoleMember, Project: "tA", Password: testPassword},
		{Name: "rita", Role: models.RoleReader, Project: "tB", Password: testPassword},
	}})
}

// login signs c in through the form and fails the test unless it worked.
func login(c *client, name string) {
	c.T.Helper()
	r := c.Login(name, testPassword)
	if r.StatusCode != http.StatusSeeOther {
		c.T.Fatalf("login %s: status %d, want 303; body:\n%s", name, r.StatusCode, r.Body)
	}
}
