package store_test

import (
	"context"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// ServersPerHost counts per host, busiest first, per project when asked,
// and pages through hosts, on SQLite and PostgreSQL alike.
func TestServersPerHost(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, h := range []string{"cn1", "cn2", "cn3"} {
			mustProvider(t, s, h, "")
		}
		for _, v := range []models.Server{
			{Name: "a1", ProjectID: "acme", Host: "cn2"}, {Name: "a2", ProjectID: "acme", Host: "cn2"},
			{Name: "g1", ProjectID: "globex", Host: "cn2"}, {Name: "g2", ProjectID: "globex", Host: "cn1"},
			{Name: "a3", ProjectID: "acme", Host: "cn3"}, {Name: "pending", ProjectID: "acme"},
		} {
			if err := s.CreateServer(ctx, admin, &v); err != nil {
				t.Fatal(err)
			}
		}
		got, total, err := s.ServersPerHost(ctx, "", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.HostServers{{Host: "cn2", Servers: 3, Projects: 2}, {Host: "", Servers: 1, Projects: 1},
			{Host: "cn1", Servers: 1, Projects: 1}, {Host: "cn3", Servers: 1, Projects: 1}}
		if total != 4 || !equalHostServers(got, want) {
			t.Errorf("all projects: %v (%d hosts), want %v (4)", got, total, want)
		}
		got, total, err = s.ServersPerHost(ctx, "acme", 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if total != 3 || !equalHostServers(got, []store.HostServers{{Host: "", Servers: 1, Projects: 1}}) {
			t.Errorf("acme, second host: %v (%d hosts), want the unscheduled one of 3", got, total)
		}
	})
}

func equalHostServers(a, b []store.HostServers) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
