package web_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/web/webtest"
)

// The authorization matrix: every route of the application, as the router
// lists it, against five callers. A route without a row fails the test,
// so a new route states who may reach it.
//
// Each letter is what one caller gets, in the order anonymous, reader (of
// another project), member of the project that owns the objects named in
// the path, member of another project, admin:
//
//	T  through: the handler ran (any status but those below)
//	A  authentication needed: 401, or a redirect to /login
//	F  forbidden: 403
//	N  not found: 404 (an object of another project, as elsewhere)
//
// Routes registered for any method (the Placement API dispatches by
// method itself) have one row under "*". Every Nova and Placement path but
// the version documents is a 401 without a token, whatever the method or
// body, as upstream's auth middleware answers.
//
// Paths with :project_id carry "tA", mike's project: the others' tokens
// name another project (or none), and that segment is no hex project id,
// so Nova's router finds nothing (404); mike gets what the unprefixed
// route gives him (TestComputeRoutesWithTheProjectInThePath compares every
// caller with its own project).
var authzMatrix = map[string]string{
	// Connected mode is off in this app: its draft pages find nothing, and
	// say why (TestCloudDraftPagesSayCorralIsStandalone).
	"GET /cloud":                                       "ATTTT",
	"GET /cloud/drafts/:id":                            "ANNNN",
	"GET /cloud/sync/progress":                         "ANNNN",
	"POST /cloud/drafts/:id/rollout":                   "FFFFN",
	"POST /cloud/sync":                                 "FFFFT",
	"GET /doctor":                                      "ATTTT",
	"GET /api/doctor":                                  "ATTTT",
	"POST /doctor/ack":                                 "FFFFT",
	"POST /doctor/fix":                                 "FFFFT",
	"POST /doctor/unack":                               "FFFFT",
	"DELETE /api/drafts/:id":                           "FFFFT",
	"DELETE /api/drafts/:id/changes/:n":                "FFFFT",
	"GET /api/drafts":                                  "ATTTT",
	"GET /api/drafts/:id":                              "ATTTT",
	"GET /api/drafts/:id/stranded":                     "ATTTT",
	"GET /drafts/:id/apply":                            "AFFFT",
	"GET /drafts/:id/discard":                          "AFFFT",
	"GET /drafts/:id/stranded":                         "ATTTT",
	"GET /favicon.ico":                                 "TTTTT",
	"POST /api/drafts":                                 "FFFFT",
	"POST /api/drafts/:id/apply":                       "FFFFT",
	"POST /api/drafts/:id/changes":                     "FFFFT",
	"POST /api/drafts/:id/preview":                     "FTTTT",
	"POST /drafts/revert":                              "FFFFT",
	"POST /drafts/stage":                               "FFFFT",
	"POST /impact/inline":                              "FTTTT",
	"* /placement/resource_providers":                  "ATTTT",
	"* /placement/resource_providers/:uuid":            "AFFFT",
	"* /placement/resource_providers/:uuid/aggregates": "AFFFN",
	"* /placement/resource_providers/:uuid/traits":     "AFFFN",
	// The resource endpoints: PUT where Placement has no PUT is a 405 for
	// everyone; writes are the admin's; a class or trait named "1" is
	// not found.
	"* /placement/allocation_candidates":                    "ATTTT",
	"* /placement/allocations":                              "ATTTT",
	"* /placement/allocations/:consumer":                    "AFFFT",
	"* /placement/resource_classes":                         "ATTTT",
	"* /placement/resource_classes/:name":                   "AFFFN",
	"* /placement/resource_providers/:uuid/allocations":     "ATTTT",
	"* /placement/resource_providers/:uuid/inventories":     "AFFFT",
	"* /placement/resource_providers/:uuid/inventories/:rc": "AFFFT",
	"* /placement/resource_providers/:uuid/usages":          "ATTTT",
	"* /placement/traits":                                   "ATTTT",
	"* /placement/traits/:name":                             "AFFFN",
	"* /placement/usages":                                   "ATTTT",
	"DELETE /compute/v2.1/:project_id/os-aggregates/:id":    "ANFNN",
	"DELETE /compute/v2.1/:project_id/os-quota-sets/:id":    "ANFNN",
	"DELETE /compute/v2.1/:project_id/os-server-groups/:id": "ANTNN",
	"DELETE /compute/v2.1/os-aggregates/:id":                "AFFFT",
	"DELETE /compute/v2.1/os-quota-sets/:id":                "AFFFT",
	"DELETE /compute/v2.1/os-server-groups/:id":             "ANTNN",
	"GET /":                                           "ATTTT",
	"GET /aggregates":                                 "ATTTT",
	"GET /aggregates/:id":                             "ATTTT",
	"GET /aggregates/:id/delete":                      "AFFFT",
	"GET /aggregates/:id/picker":                      "ATTTT",
	"GET /aggregates/new":                             "AFFFT",
	"GET /api/drafts/:id/impact":                      "ATTTT",
	"GET /api/whoami":                                 "ATTTT",
	"GET /api/world":                                  "AFFFT",
	"GET /audit":                                      "ATTTT",
	"GET /compute":                                    "TTTTT",
	"GET /compute/":                                   "TTTTT",
	"GET /compute/v2.1":                               "TTTTT",
	"GET /compute/v2.1/":                              "TTTTT",
	"GET /compute/v2.1/:project_id/limits":            "ANTNN",
	"GET /compute/v2.1/:project_id/os-aggregates":     "ANFNN",
	"GET /compute/v2.1/:project_id/os-aggregates/:id": "ANFNN",
	"GET /compute/v2.1/:project_id/os-quota-sets/:id": "ANTNN",
	"GET /compute/v2.1/:project_id/os-quota-sets/:id/defaults": "ANTNN",
	"GET /compute/v2.1/:project_id/os-quota-sets/:id/detail":   "ANTNN",
	"GET /compute/v2.1/:project_id/os-server-groups":           "ANTNN",
	"GET /compute/v2.1/:project_id/os-server-groups/:id":       "ANTNN",
	"GET /compute/v2.1/limits":                                 "ATTTT",
	"GET /compute/v2.1/os-aggregates":                          "AFFFT",
	"GET /compute/v2.1/os-aggregates/:id":                      "AFFFT",
	"GET /compute/v2.1/os-quota-sets/:id":                      "AFTFT",
	"GET /compute/v2.1/os-quota-sets/:id/defaults":             "ATTTT",
	"GET /compute/v2.1/os-quota-sets/:id/detail":               "AFTFT",
	"GET /compute/v2.1/os-server-groups":                       "ATTTT",
	"GET /compute/v2.1/os-server-groups/:id":                   "ANTNT",
	"GET /compute/v2.1/projects":                               "AFFFT",
	"GET /compute/v2.1/projects/:id":                           "ANTNT",
	"GET /compute/v2.1/v2.0/quotas/:id":                        "AFTFT",
	"GET /drafts":                                              "ATTTT",
	"GET /drafts/:id":                                          "ATTTT",
	"GET /drafts/open-options":                                 "AFFFT",
	"GET /drafts/:id/impact":                                   "ATTTT",
	"GET /drafts/:id/rebase":                                   "AFFFT",
	"GET /flavors":                                             "ATTTT",
	"GET /flavors/:id":                                         "ATTTT",
	"GET /flavors/:id/delete":                                  "AFFFT",
	"GET /flavors/new":                                         "AFFFT",
	"GET /healthz":                                             "TTTTT",
	"GET /login":                                               "TTTTT",
	"GET /login/project":                                       "AAAAA", // the project choice after a Keystone sign-in; standalone there is none
	"POST /login/project":                                      "FAAAA",
	"GET /placement":                                           "TTTTT",
	"GET /placement/":                                          "TTTTT",
	"GET /placement/resource_providers":                        "ATTTT",
	"GET /placement/resource_providers/:uuid":                  "ATTTT",
	"GET /placement/resource_providers/:uuid/aggregates":       "ANNNN",
	"GET /placement/resource_providers/:uuid/traits":           "ANNNN",
	// Below their microversions (the matrix sends none) these are 404s,
	// as in Placement.
	"GET /placement/allocation_candidates":                    "ANNNN",
	"GET /placement/allocations":                              "ATTTT",
	"GET /placement/allocations/:consumer":                    "ATTTT",
	"GET /placement/resource_classes":                         "ANNNN",
	"GET /placement/resource_classes/:name":                   "ANNNN",
	"GET /placement/resource_providers/:uuid/allocations":     "ATTTT",
	"GET /placement/resource_providers/:uuid/inventories":     "ATTTT",
	"GET /placement/resource_providers/:uuid/inventories/:rc": "ANNNN",
	"GET /placement/resource_providers/:uuid/usages":          "ATTTT",
	"GET /placement/traits":                                   "ANNNN",
	"GET /placement/traits/:name":                             "ANNNN",
	"GET /placement/usages":                                   "ANNNN",
	"GET /providers":                                          "ATTTT",
	"GET /providers/:id":                                      "ATTTT",
	"GET /query":                                              "ATTTT",
	"GET /query/preview":                                      "ATTTT",
	"GET /quotas":                                             "ATTTT",
	"GET /quotas/:project":                                    "ANTNT",
	"GET /server-groups":                                      "ATTTT",
	"GET /servers":                                            "ATTTT",
	"GET /server-groups/:id":                                  "ANTNT",
	"GET /server-groups/:id/delete":                           "AFTNT",
	"GET /server-groups/new":                                  "AFTTT",
	"GET /sessions/:id/revoke":                                "ANNNN",
	"GET /settings":                                           "ATTTT",
	"GET /static/*":                                           "TTTTT",
	"GET /tokens":                                             "ATTTT",
	"GET /tokens/:id/revoke":                                  "ANTNN",
	"GET /users":                                              "AFFFT",
	"GET /users/:id":                                          "AFFFT",
	"GET /users/:id/delete":                                   "AFFFT",
	"GET /users/:id/sessions/revoke":                          "AFFFT",
	"GET /users/:id/tokens/:token/revoke":                     "AFFFT",
	"GET /world":                                              "AFFFT",
	"GET /world/export":                                       "AFFFT",
	"POST /aggregates":                                        "FFFFT",
	"POST /aggregates/:id":                                    "FFFFT",
	"POST /aggregates/:id/delete":                             "FFFFT",
	"POST /aggregates/:id/members":                            "FFFFT",
	"POST /aggregates/:id/members/remove":                     "FFFFT",
	"POST /aggregates/:id/metadata":                           "FFFFT",
	"POST /aggregates/:id/metadata/validate":                  "FTTTT",
	"POST /aggregates/:id/reservations":                       "FFFFT",
	"POST /aggregates/:id/reservations/remove":                "FFFFT",
	"POST /aggregates/:id/tenants":                            "FFFFT",
	"POST /aggregates/:id/tenants/remove":                     "FFFFT",
	"POST /api/preview":                                       "FTTTT",
	"POST /compute/v2.1/:project_id/os-aggregates":            "ANTNN",
	"POST /compute/v2.1/:project_id/os-aggregates/:id/action": "ANTNN",
	"POST /compute/v2.1/:project_id/os-server-groups":         "ANTNN",
	"POST /compute/v2.1/os-aggregates":                        "ATTTT",
	"POST /compute/v2.1/os-aggregates/:id/action":             "ATTTT",
	"POST /compute/v2.1/os-server-groups":                     "ATTTT",
	"POST /drafts":                                            "FFFFT",
	"POST /drafts/:id/apply":                                  "FFFFT",
	"POST /drafts/:id/changes":                                "FFFFT",
	"POST /drafts/:id/changes/:n/delete":                      "FFFFN",
	"POST /drafts/:id/discard":                                "FFFFT",
	"POST /drafts/:id/rebase":                                 "FFFFT",
	"POST /flavors":                                           "FFFFT",
	"POST /providers/:id/inventory":                           "FFFFT",
	"POST /providers/:id/traits":                              "FFFFT",
	"POST /flavors/:id":                                       "FFFFT",
	"POST /flavors/:id/delete":                                "FFFFT",
	"POST /flavors/validate":                                  "FTTTT",
	"POST /login":                                             "FAAAA",
	"POST /logout":                                            "FAAAA",
	"POST /password":                                          "FFFFF",
	"POST /quotas/:project":                                   "FFFFT",
	"POST /quotas/:project/reset":                             "FFFFT",
	"POST /server-groups":                                     "FFTTT",
	"POST /server-groups/:id/delete":                          "FFTNN",
	"POST /server-groups/:id/members":                         "FFTNT",
	"POST /server-groups/:id/members/remove":                  "FFTNT",
	"POST /sessions/:id/revoke":                               "FNNNN",
	"POST /sessions/revoke-others":                            "FTTTT",
	"POST /settings":                                          "FFFFT",
	"POST /tokens":                                            "FTTTT",
	"POST /tokens/:id/revoke":                                 "FNTNN",
	"POST /users":                                             "FFFFT",
	"POST /users/:id":                                         "FFFFT",
	"POST /users/:id/delete":                                  "FFFFT",
	"POST /users/:id/password":                                "FFFFT",
	"POST /users/:id/sessions/revoke":                         "FFFFT",
	"POST /users/:id/tokens/:token/revoke":                    "FFFFT",
	"POST /world/apply":                                       "FFFFT",
	"POST /world/preview":                                     "FFFFT",
	"PUT /compute/v2.1/:project_id/os-aggregates/:id":         "ANTNN",
	"PUT /compute/v2.1/:project_id/os-quota-sets/:id":         "ANTNN",
	"PUT /compute/v2.1/os-aggregates/:id":                     "ATTTT",
	"PUT /compute/v2.1/os-quota-sets/:id":                     "ATTTT",
}

// authzCallers are the five callers, in the order of a row's letters.
var authzCallers = []string{"", "rita", "mike", "otto", "alice"}

// authzFixture is what a route's path parameters name: objects owned by
// project tA (mike's).
type authzFixture struct {
	provider, aggregateUUID, aggregateID, flavor, group, draft string
	mikeID, mikeToken                                          string
}

// authzUsers are the matrix's callers; mike's project tA owns the objects.
var authzUsers = []webtest.User{
	{Name: "alice", Role: models.RoleAdmin},
	{Name: "mike", Role: models.RoleMember, Project: "tA"},
	{Name: "rita", Role: models.RoleReader, Project: "tB"},
	{Name: "otto", Role: models.RoleMember, Project: "tB"},
}

func newAuthzApp(t *testing.T) (*testApp, authzFixture) {
	t.Helper()
	return newAuthzAppWith(t, authzUsers)
}

func newAuthzAppWith(t *testing.T, users []webtest.User) (*testApp, authzFixture) {
	t.Helper()
	a := webtest.StartWith(t, webtest.Options{Tokens: true, Users: users})
	ctx := context.Background()
	cli := store.Actor{Name: "test", Via: "cli"}
	p := &models.Provider{Name: "cn1", Inventories: map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1, MinUnit: 1, MaxUnit: 8, StepSize: 1}}}
	if err := a.Store.CreateProvider(ctx, cli, p); err != nil {
		t.Fatal(err)
	}
	agg := &models.Aggregate{Name: "agg1", Members: []string{p.UUID}}
	if err := a.Store.CreateAggregate(ctx, cli, agg); err != nil {
		t.Fatal(err)
	}
	f := &models.Flavor{Name: "m1.small", VCPUs: 1, RAMMB: 512, DiskGB: 1}
	if err := a.Store.CreateFlavor(ctx, cli, f); err != nil {
		t.Fatal(err)
	}
	g := &models.ServerGroup{Name: "gA", ProjectID: "tA", UserID: "u", Policy: models.PolicyAntiAffinity}
	if err := a.Store.CreateServerGroup(ctx, cli, g); err != nil {
		t.Fatal(err)
	}
	d, err := a.Store.CreateDraft(ctx, cli, "d1")
	if err != nil {
		t.Fatal(err)
	}
	mike, err := a.Store.UserByName(ctx, "mike")
	if err != nil {
		t.Fatal(err)
	}
	toks, err := a.Store.ListTokens(ctx, mike.ID)
	if err != nil || len(toks) == 0 {
		t.Fatalf("mike's tokens: %v, %v", toks, err)
	}
	return a, authzFixture{
		provider: p.UUID, aggregateUUID: agg.UUID, aggregateID: strconv.FormatInt(agg.ID, 10), flavor: f.ID,
		group: g.UUID, draft: d.ID, mikeID: strconv.FormatInt(mike.ID, 10), mikeToken: strconv.FormatInt(toks[0].ID, 10),
	}
}

// authzPath fills a route's parameters with the fixture's objects.
func authzPath(route string, f authzFixture) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		if !strings.HasPrefix(p, ":") && p != "*" {
			continue
		}
		prev := ""
		if i > 0 {
			prev = parts[i-1]
		}
		switch {
		case p == "*":
			parts[i] = "css/corral.css"
		case p == ":project_id" || p == ":project":
			parts[i] = "tA"
		case p == ":uuid":
			parts[i] = f.provider
		case p == ":n":
			parts[i] = "0"
		case p == ":token":
			parts[i] = f.mikeToken
		case prev == "aggregates":
			parts[i] = f.aggregateUUID
		case prev == "os-aggregates":
			parts[i] = f.aggregateID
		case prev == "providers":
			parts[i] = f.provider
		case prev == "flavors":
			parts[i] = f.flavor
		case prev == "server-groups" || prev == "os-server-groups":
			parts[i] = f.group
		case prev == "drafts":
			parts[i] = f.draft
		case prev == "users":
			parts[i] = f.mikeID
		case prev == "tokens":
			parts[i] = f.mikeToken
		case prev == "os-quota-sets" || prev == "projects" || prev == "quotas":
			parts[i] = "tA"
		default:
			parts[i] = "1"
		}
	}
	return strings.Join(parts, "/")
}

func authzOutcome(r *response) byte {
	switch {
	case r.StatusCode == http.StatusUnauthorized:
		return 'A'
	case r.StatusCode >= 300 && r.StatusCode < 400 && strings.HasPrefix(r.Header.Get("Location"), "/login"):
		return 'A'
	case r.StatusCode == http.StatusForbidden:
		return 'F'
	case r.StatusCode == http.StatusNotFound:
		return 'N'
	}
	return 'T'
}

func TestAuthorizationMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("one app per route")
	}
	probe := newApp(t)
	routes := map[string]bool{}
	for _, r := range probe.Echo.Routes() {
		if strings.HasPrefix(r.Method, "echo_route_not_found") {
			continue
		}
		key := r.Method + " " + r.Path
		if strings.HasPrefix(r.Path, "/placement/") && r.Method != http.MethodGet {
			key = "* " + r.Path // Any(): the handler dispatches by method
		}
		routes[key] = true
	}
	keys := make([]string, 0, len(routes))
	for k := range routes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var missing []string
	for _, key := range keys {
		method, route, _ := strings.Cut(key, " ")
		if method == "*" {
			method = http.MethodPut
		}
		a, fx := newAuthzApp(t)
		path := authzPath(route, fx)
		row := make([]byte, len(authzCallers))
		// The admin goes last: its request may change what the path names.
		for i, who := range authzCallers {
			c := a.Client(t)
			if who != "" {
				c.Token = a.Tokens[who]
			}
			hdr := []string{"Content-Type", "application/x-www-form-urlencoded"}
			if strings.HasPrefix(route, "/compute") || strings.HasPrefix(route, "/placement") || strings.HasPrefix(route, "/api") {
				hdr = []string{"Content-Type", "application/json"}
			}
			r := c.Request(method, path, strings.NewReader(""), hdr...)
			if r.StatusCode >= 500 {
				t.Errorf("%s %s as %q: status %d", method, path, who, r.StatusCode)
			}
			row[i] = authzOutcome(r)
		}
		want, ok := authzMatrix[key]
		if !ok {
			missing = append(missing, fmt.Sprintf("\t%q: %q,", key, string(row)))
			continue
		}
		if string(row) != want {
			t.Errorf("%s (%s): got %s, want %s (anonymous, reader, member, other project, admin)", key, path, row, want)
		}
	}
	for k := range authzMatrix {
		if !routes[k] {
			t.Errorf("row %q names no route", k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d routes have no row in authzMatrix; what they answer now (check before adding):\n%s", len(missing), strings.Join(missing, "\n"))
	}
}
