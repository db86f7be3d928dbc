package web_test

import (
	"net/http"
	"strings"
	"testing"

	"corral/models"
	"corral/web/webtest"
)

// TestComputeRoutesWithTheProjectInThePath: Nova's /v2.1/{project_id}/…
// form answers as the unprefixed route does when the project is the
// caller's own (for the member of the project, another project's member
// and an admin alike), a 400 naming both projects when it is another hex
// project id, and a 404 for any other segment, as Nova does.
func TestComputeRoutesWithTheProjectInThePath(t *testing.T) {
	if testing.Short() {
		t.Skip("one app per route and caller")
	}
	users := []webtest.User{
		{Name: "alice", Role: models.RoleAdmin, Project: "0adc1ce0"},
		{Name: "mike", Role: models.RoleMember, Project: "tA"},
		{Name: "otto", Role: models.RoleMember, Project: "0770"},
	}
	probe := newApp(t)
	const prefix = "/compute/v2.1/:project_id/"
	var routes [][2]string
	for _, r := range probe.Echo.Routes() {
		if strings.HasPrefix(r.Path, prefix) {
			routes = append(routes, [2]string{r.Method, r.Path})
		}
	}
	if len(routes) < 10 {
		t.Fatalf("only %d routes with the project in the path", len(routes))
	}
	call := func(method, route, project, who string) *response {
		a, fx := newAuthzAppWith(t, users)
		path := authzPath(route, fx)
		if project != "" {
			path = strings.Replace(authzPath(route, fx), "/v2.1/tA/", "/v2.1/"+project+"/", 1)
		}
		c := a.Client(t)
		c.Token = a.Tokens[who]
		return c.Request(method, path, strings.NewReader(""), "Content-Type", "application/json")
	}
	for _, rt := range routes {
		method, route := rt[0], rt[1]
		plain := strings.Replace(route, ":project_id/", "", 1)
		for _, u := range users {
			want := call(method, plain, "", u.Name)
			got := call(method, route, u.Project, u.Name)
			if got.StatusCode != want.StatusCode {
				t.Errorf("%s %s as %s with its own project: status %d, the unprefixed route %d; body %.200s", method, route, u.Name, got.StatusCode, want.StatusCode, got.Body)
			}
		}
		if r := call(method, route, "0adc1ce0", "mike"); r.StatusCode != http.StatusBadRequest ||
			!strings.Contains(r.Body, "URL's project_id '0adc1ce0' doesn't match Context's project_id 'tA'") {
			t.Errorf("%s %s as mike with another hex project: status %d, want Nova's 400; body %.200s", method, route, r.StatusCode, r.Body)
		}
		if r := call(method, route, "tB", "mike"); r.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s as mike with a segment that is no project id: status %d, want 404", method, route, r.StatusCode)
		}
	}
}
