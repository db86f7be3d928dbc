package console_test

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"corral/models/store"
)

// The Servers page lists what the store holds, host by host, and shows a
// member or reader only their own project's servers.
func TestServersPage(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	all, total, err := a.Store.ListServers(ctx, store.ServerQuery{})
	if err != nil || total == 0 {
		t.Fatalf("demo servers: %d, %v", total, err)
	}
	perHost := map[string]int{}
	byProject := map[string][]string{}
	for _, s := range all {
		perHost[s.Host]++
		byProject[s.ProjectID] = append(byProject[s.ProjectID], s.UUID)
	}

	admin := a.as("admin")
	page := admin.Get("/servers?limit=500")
	if page.StatusCode != 200 {
		t.Fatalf("GET /servers: %d %s", page.StatusCode, page.ErrorsText())
	}
	if n := page.Count(t, "server-row"); n != total {
		t.Errorf("admin sees %d servers, the store holds %d", n, total)
	}
	// The summary's counts are the store's, busiest first.
	doc := page.Doc(t)
	prev := -1
	doc.Find(sel("server-host-row")).Each(func(_ int, r *goqSel) {
		host := r.Find(sel("server-host-name")).Text()
		n, _ := strconv.Atoi(r.Find(sel("server-host-count")).Text())
		if host != "" && perHost[host] != n {
			t.Errorf("host %s: page says %d servers, store has %d", host, n, perHost[host])
		}
		if prev >= 0 && n > prev {
			t.Errorf("host %s (%d servers) listed after a host with %d", host, n, prev)
		}
		prev = n
	})
	if page.Count(t, "server-host-row") == 0 {
		t.Error("no host in the summary")
	}

	// One host's filter lists exactly its servers, each linking to the
	// X-ray of its request narrowed to that host.
	var host string
	for h, n := range perHost {
		if h != "" && n > 0 && (host == "" || h < host) {
			host = h
		}
	}
	one := admin.Get("/servers?host=" + url.QueryEscape(host))
	if got := one.Count(t, "server-row"); got != perHost[host] {
		t.Errorf("host %s: %d rows, want %d", host, got, perHost[host])
	}
	for _, h := range one.Texts(t, "server-host") {
		if h != host {
			t.Errorf("filter host=%s listed a server on %q", host, h)
		}
	}
	xray, ok := one.Doc(t).Find(sel("server-xray")).First().Attr("href")
	if !ok {
		t.Fatal("no X-ray link")
	}
	u, err := url.Parse(xray)
	if err != nil || u.Path != "/query" || u.Query().Get("hname") != host || u.Query().Get("project") == "" {
		t.Errorf("X-ray link %q: want /query with the project and hname=%s", xray, host)
	}
	if x := admin.Get(xray); x.StatusCode != 200 {
		t.Errorf("the X-ray link answers %d", x.StatusCode)
	}

	// Scoping: mike (acme) and rita (globex) see only their project's.
	for _, who := range []struct{ user, project string }{{"mike", "acme"}, {"rita", "globex"}} {
		p := a.as(who.user).Get("/servers?limit=500&project=" + firstOtherProject(byProject, who.project))
		if p.StatusCode != 200 {
			t.Fatalf("%s: GET /servers: %d", who.user, p.StatusCode)
		}
		if got, want := p.Count(t, "server-row"), len(byProject[who.project]); got != want {
			t.Errorf("%s sees %d servers, their project %s has %d", who.user, got, who.project, want)
		}
		if p.Has(t, "server-project") {
			t.Errorf("%s is shown a project column", who.user)
		}
		p.Doc(t).Find(sel("server-row")).Each(func(_ int, r *goqSel) {
			id := r.Find(".mono").Text()
			if !slices.Contains(byProject[who.project], id) {
				t.Errorf("%s sees server %s of another project", who.user, id)
			}
		})
	}
}

// firstOtherProject names a project other than mine, which a non-admin's
// project filter must not reach.
func firstOtherProject(byProject map[string][]string, mine string) string {
	for p := range byProject {
		if p != mine && p != "" {
			return p
		}
	}
	return "nobody"
}
