package web_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
	"corral/web"
)

var testActor = store.Actor{Name: "test", Via: "cli"}

// zoneWorld is two zoned aggregates and host h1 in the first.
type zoneWorld struct {
	t      testing.TB
	a      *testApp
	token  string // alice's (admin) API token
	host   *models.Provider
	az1    *models.Aggregate
	az2    *models.Aggregate
	shared *models.Provider
}

func newZoneWorld(t *testing.T, st *store.Store) *zoneWorld {
	t.Helper()
	ctx := context.Background()
	a := newAppOn(t, st, web.Config{})
	w := &zoneWorld{t: t, a: a}
	w.host = &models.Provider{Name: "h1", Inventories: map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1, MaxUnit: 8, StepSize: 1, MinUnit: 1}}}
	w.shared = &models.Provider{Name: "nfs", Traits: []string{models.TraitSharesViaAggregate}}
	for _, p := range []*models.Provider{w.host, w.shared} {
		if err := st.CreateProvider(ctx, testActor, p); err != nil {
			t.Fatal(err)
		}
	}
	z1, z2 := "az1", "az2"
	w.az1 = &models.Aggregate{Name: "zone-one", AvailabilityZone: &z1, Members: []string{w.host.UUID, w.shared.UUID}}
	w.az2 = &models.Aggregate{Name: "zone-two", AvailabilityZone: &z2}
	for _, ag := range []*models.Aggregate{w.az1, w.az2} {
		if err := st.CreateAggregate(ctx, testActor, ag); err != nil {
			t.Fatal(err)
		}
	}
	plain, _, err := st.CreateToken(ctx, testActor, "alice", "rules")
	if err != nil {
		t.Fatal(err)
	}
	w.token = plain
	return w
}

// zonesOf lists the zones h1 is in now.
func (w *zoneWorld) zonesOf(t *testing.T, provUUID string) []string {
	t.Helper()
	ctx := context.Background()
	aggs, _, err := w.a.Store.ProviderAggregates(ctx, provUUID)
	if err != nil {
		t.Fatal(err)
	}
	var zones []string
	for _, u := range aggs {
		ag, err := w.a.Store.GetAggregate(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if ag.AvailabilityZone != nil && !slices.Contains(zones, *ag.AvailabilityZone) {
			zones = append(zones, *ag.AvailabilityZone)
		}
	}
	slices.Sort(zones)
	return zones
}

func (w *zoneWorld) api(method, path, body string, hdr ...string) *response {
	c := w.a.Client(w.t)
	req, _ := http.NewRequest(method, w.a.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Auth-Token", w.token)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.Do(req)
}

// TestZoneRuleAtEveryDoor: a host is in at most one availability zone
// (Nova's is_safe_to_update_az), whichever door the change comes through.
func TestZoneRuleAtEveryDoor(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		w := newZoneWorld(t, st)
		ctx := context.Background()
		refused := func(door string, r *response, status int, want string) {
			t.Helper()
			if r.StatusCode != status || !strings.Contains(r.Body, want) {
				t.Errorf("%s: status %d, want %d with %q; body:\n%.600s", door, r.StatusCode, status, want, r.Body)
			}
			if got := w.zonesOf(t, w.host.UUID); !slices.Equal(got, []string{"az1"}) {
				t.Fatalf("%s: h1 is now in zones %v", door, got)
			}
		}

		// Console: the member picker of zone-two.
		admin := w.a.Client(t)
		login(admin, "alice")
		path := "/aggregates/" + w.az2.UUID
		// The refusal comes back to the picker (post/redirect/get).
		r := admin.Submit(path, path+"/members", url.Values{"bulk": {"h1"}, "generation": {strconv.FormatInt(w.az2.Generation, 10)}})
		if r.StatusCode != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "retry=members") {
			t.Fatalf("console: status %d, location %q", r.StatusCode, r.Header.Get("Location"))
		}
		r = admin.Get(r.Header.Get("Location"))
		refused("console", r, http.StatusOK, "availability zone")

		// Compute API: add_host.
		r = w.api(http.MethodPost, fmt.Sprintf("/compute/v2.1/os-aggregates/%d/action", w.az2.ID), `{"add_host": {"host": "h1"}}`)
		refused("compute add_host", r, http.StatusConflict, "One or more hosts already in availability zone(s) ['az1']")

		// Compute API: set_metadata moving an aggregate holding h1 to a zone.
		plain := &models.Aggregate{Name: "plain", Members: []string{w.host.UUID}}
		if err := st.CreateAggregate(ctx, testActor, plain); err != nil {
			t.Fatal(err)
		}
		r = w.api(http.MethodPost, fmt.Sprintf("/compute/v2.1/os-aggregates/%d/action", plain.ID), `{"set_metadata": {"metadata": {"availability_zone": "az3"}}}`)
		refused("compute set_metadata", r, http.StatusBadRequest, "One or more hosts already in availability zone(s) ['az1']")
		r = w.api(http.MethodPut, fmt.Sprintf("/compute/v2.1/os-aggregates/%d", plain.ID), `{"aggregate": {"availability_zone": "az3"}}`)
		refused("compute update", r, http.StatusBadRequest, "One or more hosts already in availability zone(s) ['az1']")

		// Placement API: the provider's aggregates.
		_, gen, err := st.ProviderAggregates(ctx, w.host.UUID)
		if err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf(`{"aggregates": [%q, %q, %q], "resource_provider_generation": %d}`, w.az1.UUID, plain.UUID, w.az2.UUID, gen)
		r = w.api(http.MethodPut, "/placement/resource_providers/"+w.host.UUID+"/aggregates", body, "OpenStack-API-Version", "placement 1.19")
		refused("placement", r, http.StatusConflict, "availability zone")

		// Import: a world file putting h1 into zone-two too.
		world, err := st.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range world.Aggregates {
			if world.Aggregates[i].UUID == w.az2.UUID {
				world.Aggregates[i].Members = []string{w.host.UUID}
			}
		}
		var file bytes.Buffer
		if err := models.EncodeWorld(&file, world); err != nil {
			t.Fatal(err)
		}
		r = upload(admin, "/world", "/world/preview", "world.json", file.Bytes(), url.Values{"mode": {"merge"}})
		refused("import", r, http.StatusConflict, "availability zone")
		if err := st.ImportWorld(ctx, testActor, world, false); models.KindOf(err) != models.Conflict {
			t.Errorf("store import: %v, want a conflict", err)
		}

		// Draft apply.
		d, err := st.CreateDraft(ctx, testActor, "move h1")
		if err != nil {
			t.Fatal(err)
		}
		d, err = st.SetDraftChanges(ctx, testActor, d.ID, d.Version, []scheduling.Change{{Op: scheduling.OpAddMember, Aggregate: "zone-two", Provider: "h1"}})
		if err != nil {
			t.Fatal(err)
		}
		r = admin.Submit("/drafts/"+d.ID, "/drafts/"+d.ID+"/apply", url.Values{"version": {strconv.FormatInt(d.Version, 10)}})
		if r.StatusCode != http.StatusSeeOther {
			t.Errorf("draft apply: status %d", r.StatusCode)
		}
		if got := w.zonesOf(t, w.host.UUID); !slices.Equal(got, []string{"az1"}) {
			t.Fatalf("draft apply: h1 is now in zones %v", got)
		}
		if _, err := st.ApplyDraft(ctx, testActor, d.ID, d.Version); models.KindOf(err) != models.Conflict || !strings.Contains(err.Error(), "availability zone") {
			t.Errorf("store draft apply: %v, want a zone conflict", err)
		}

		// A sharing provider may serve several zones.
		if _, err := st.UpdateAggregate(ctx, testActor, w.az2.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
			a.Members = append(a.Members, w.shared.UUID)
			return nil
		}); err != nil {
			t.Errorf("a sharing provider in two zones was refused: %v", err)
		}
	})
}

// TestConcurrentAddHostNeverTwoZones: 20 trials of two simultaneous
// add_host calls putting one host into two zones: at most one succeeds.
func TestConcurrentAddHostNeverTwoZones(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		w := newZoneWorld(t, st)
		ctx := context.Background()
		for trial := range 20 {
			host := &models.Provider{Name: fmt.Sprintf("c%d", trial)}
			if err := st.CreateProvider(ctx, testActor, host); err != nil {
				t.Fatal(err)
			}
			var aggs [2]*models.Aggregate
			for i := range aggs {
				z := fmt.Sprintf("t%d-z%d", trial, i)
				aggs[i] = &models.Aggregate{Name: z, AvailabilityZone: &z}
				if err := st.CreateAggregate(ctx, testActor, aggs[i]); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			status := make([]int, 2)
			for i, ag := range aggs {
				wg.Go(func() {
					r := w.api(http.MethodPost, fmt.Sprintf("/compute/v2.1/os-aggregates/%d/action", ag.ID), fmt.Sprintf(`{"add_host": {"host": %q}}`, host.Name))
					status[i] = r.StatusCode
				})
			}
			wg.Wait()
			if zones := w.zonesOf(t, host.UUID); len(zones) != 1 {
				t.Errorf("trial %d: host in zones %v (statuses %v)", trial, zones, status)
			}
			slices.Sort(status)
			if status[0] != http.StatusOK || status[1] != http.StatusConflict {
				t.Errorf("trial %d: statuses %v, want one 200 and one 409", trial, status)
			}
		}
	})
}

// upload posts a multipart form with one file field, with the CSRF token
// taken from the page at from.
func upload(c *client, from, action, name string, data []byte, fields url.Values) *response {
	c.T.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("_csrf", c.CSRF(from))
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, c.App.URL+action, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.Do(req)
}

// TestGroupRulesAtEveryDoor: rules only with anti-affinity, at the console
// form, the compute API, import and the store.
func TestGroupRulesAtEveryDoor(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		w := newZoneWorld(t, st)
		ctx := context.Background()
		admin := w.a.Client(t)
		login(admin, "alice")
		// The console's refusal comes back to the form (post/redirect/get).
		r := admin.Submit("/server-groups/new", "/server-groups", url.Values{"name": {"g"}, "policy": {"affinity"}, "max_server_per_host": {"2"}, "project": {"tA"}})
		if r.StatusCode == http.StatusSeeOther {
			r = admin.Get(r.Header.Get("Location"))
		}
		if r.StatusCode != http.StatusOK || !strings.Contains(r.Body, "Only anti-affinity policy supports rules") {
			t.Errorf("console: status %d", r.StatusCode)
		}
		r = w.api(http.MethodPost, "/compute/v2.1/os-server-groups", `{"server_group": {"name": "g", "policy": "affinity", "rules": {"max_server_per_host": 2}}}`,
			"OpenStack-API-Version", "compute 2.64")
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "Only anti-affinity policy supports rules.") {
			t.Errorf("compute: status %d: %s", r.StatusCode, r.Body)
		}
		file := `{"server_groups": [{"name": "g", "project_id": "tA", "user_id": "u", "policy": "affinity", "rules": {"max_server_per_host": 2}}]}`
		r = upload(admin, "/world", "/world/preview", "world.json", []byte(file), url.Values{"mode": {"merge"}})
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "Only anti-affinity policy supports rules") {
			t.Errorf("import: status %d", r.StatusCode)
		}
		err := st.CreateServerGroup(ctx, testActor, &models.ServerGroup{Name: "g", ProjectID: "tA", Policy: models.PolicyAffinity, Rules: map[string]int{models.RuleMaxServerPerHost: 2}})
		if models.KindOf(err) != models.Invalid {
			t.Errorf("store: %v", err)
		}
		groups, err := st.ListServerGroups(ctx, store.ServerGroupQuery{})
		if err != nil || len(groups) != 0 {
			t.Errorf("groups after refusals: %v, %v", groups, err)
		}
	})
}

// TestTagRuleAtEveryDoor: a tenant or reservation tag is one id; the
// console form and a draft read it with the core's parser (Python's
// whitespace, as the filters strip it) and write the same value.
func TestTagRuleAtEveryDoor(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		w := newZoneWorld(t, st)
		ctx := context.Background()
		admin := w.a.Client(t)
		login(admin, "alice")
		path := "/aggregates/" + w.az2.UUID
		// U+00A0 is whitespace to the tenant filters (Python's str.strip).
		for _, bad := range []string{"tA\u00a0x", "tA,tB", "tA\u2003x", "tA\u0085x"} {
			r := admin.Submit(path, path+"/tenants", url.Values{"project": {bad}, "generation": {"0"}})
			// A refusal comes back to the form (post/redirect/get with
			// the value to retry), or as a 400.
			refused := r.StatusCode == http.StatusBadRequest ||
				(r.StatusCode == http.StatusSeeOther && strings.Contains(r.Header.Get("Location"), "retry=tenants"))
			if !refused {
				t.Errorf("console tenant %q: status %d, location %q", bad, r.StatusCode, r.Header.Get("Location"))
			}
			d, err := st.CreateDraft(ctx, testActor, "t")
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.SetDraftChanges(ctx, testActor, d.ID, d.Version, []scheduling.Change{{Op: scheduling.OpAddTenant, Aggregate: "zone-two", Project: bad}})
			if err == nil {
				if d, err = st.GetDraft(ctx, d.ID); err != nil {
					t.Fatal(err)
				}
				_, err = st.ApplyDraft(ctx, testActor, d.ID, d.Version)
			}
			if models.KindOf(err) != models.Invalid {
				t.Errorf("draft tenant %q: %v, want invalid", bad, err)
			}
		}
		if ag, _ := st.GetAggregate(ctx, w.az2.UUID); len(scheduling.TenantTags(ag.Metadata)) != 0 {
			t.Fatalf("tenants stored: %v", ag.Metadata)
		}

		// The same reservation through both doors: the same metadata.
		settings, _, err := st.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		settings.RequiredMemberPrefix = "reservation:"
		if err := st.UpdateSettings(ctx, testActor, store.AnyGeneration, settings); err != nil {
			t.Fatal(err)
		}
		r := admin.Submit(path, path+"/reservations", url.Values{"reservation": {"r1"}, "generation": {"0"}})
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("console reservation: status %d", r.StatusCode)
		}
		d, err := st.CreateDraft(ctx, testActor, "r")
		if err != nil {
			t.Fatal(err)
		}
		d, err = st.SetDraftChanges(ctx, testActor, d.ID, d.Version, []scheduling.Change{{Op: scheduling.OpAddReservation, Aggregate: "zone-one", Reservation: "r1"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ApplyDraft(ctx, testActor, d.ID, d.Version); err != nil {
			t.Fatal(err)
		}
		one, _ := st.GetAggregate(ctx, w.az1.UUID)
		two, _ := st.GetAggregate(ctx, w.az2.UUID)
		if one.Metadata["reservation:r1"] != two.Metadata["reservation:r1"] || one.Metadata["reservation:r1"] == "" {
			t.Errorf("draft wrote %q, console wrote %q", one.Metadata["reservation:r1"], two.Metadata["reservation:r1"])
		}
	})
}
