package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store"
)

// realFinding is what the test reads of a `corral doctor --format json`
// finding: the fix decoded as the draft changes it is.
type realFinding struct {
	Code    string `json:"code"`
	Detail  string `json:"detail"`
	Objects []struct {
		Kind, UUID, Name string
	} `json:"objects"`
	Fix []scheduling.Change `json:"fix"`
}

// findingsOn runs `corral doctor` and keeps the findings that name one of
// the aggregates (the shared cloud holds other tests' objects too).
func findingsOn(t *testing.T, db string, aggs ...string) []realFinding {
	t.Helper()
	_, out, errOut := runCLI(t, "", "doctor", "--db", db, "--format", "json")
	var r struct {
		Findings []realFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("doctor JSON: %v\n%s\n%s", err, out, errOut)
	}
	var mine []realFinding
	for _, f := range r.Findings {
		if slices.ContainsFunc(f.Objects, func(o struct{ Kind, UUID, Name string }) bool {
			return o.Kind == "aggregate" && slices.Contains(aggs, o.UUID)
		}) {
			mine = append(mine, f)
		}
	}
	return mine
}

// TestDoctorFindsAndRollsOutFixesOnTheRealCloud makes two membership
// drifts (a host Nova's aggregate has and Placement's not, and the
// reverse) and a missing isolation trait through Nova's and Placement's
// own APIs; `corral sync` and `corral doctor` find them; each finding's
// fix, as a draft, goes out through `corral rollout`; the next sync finds
// none of them, and Placement, read back, holds the fixes.
func TestDoctorFindsAndRollsOutFixesOnTheRealCloud(t *testing.T) {
	c := cloudtest.Shared(t)
	db := filepath.Join(t.TempDir(), "c.db")
	conn := []string{"--compute-url", c.ComputeURL, "--placement-url", c.PlacementURL, "--token", cloudtest.Token}
	tag := strings.ReplaceAll(models.NewUUID()[:8], "-", "")
	name := func(s string) string { return "dr-" + tag + "-" + s }
	trait := "CUSTOM_DR_" + strings.ToUpper(tag)

	hosts := map[string]string{} // name → provider uuid
	for _, h := range []string{"novaonly", "placementonly", "lacking", "having"} {
		u := models.NewUUID()
		call(t, c, "placement", "POST", "resource_providers", map[string]any{"name": name(h), "uuid": u}, nil, 200)
		if err := c.AddComputeHost(name(h), u); err != nil {
			t.Fatal(err)
		}
		hosts[h] = u
	}
	generation := func(rp string) int64 {
		var out struct {
			Generation int64 `json:"resource_provider_generation"`
		}
		call(t, c, "placement", "GET", "resource_providers/"+rp+"/aggregates", nil, &out, 200)
		return out.Generation
	}
	call(t, c, "placement", "PUT", "traits/"+trait, nil, nil, 201)
	call(t, c, "placement", "PUT", "resource_providers/"+hosts["having"]+"/traits",
		map[string]any{"resource_provider_generation": generation(hosts["having"]), "traits": []string{trait}}, nil, 200)

	type aggregate struct {
		ID   int    `json:"id"`
		UUID string `json:"uuid"`
	}
	newAggregate := func(n string, meta map[string]string, members ...string) aggregate {
		var out struct {
			Aggregate aggregate `json:"aggregate"`
		}
		call(t, c, "compute", "POST", "os-aggregates", map[string]any{"aggregate": map[string]any{"name": n}}, &out, 200)
		act := fmt.Sprintf("os-aggregates/%d/action", out.Aggregate.ID)
		if len(meta) > 0 {
			call(t, c, "compute", "POST", act, map[string]any{"set_metadata": map[string]any{"metadata": meta}}, nil, 200)
		}
		for _, h := range members {
			call(t, c, "compute", "POST", act, map[string]any{"add_host": map[string]any{"host": name(h)}}, nil, 200)
		}
		t.Cleanup(func() {
			for _, h := range members {
				_ = c.Call("compute", "POST", act, map[string]any{"remove_host": map[string]any{"host": name(h)}}, nil, 200)
			}
			_ = c.Call("compute", "DELETE", fmt.Sprintf("os-aggregates/%d", out.Aggregate.ID), nil, nil, 200)
		})
		return out.Aggregate
	}
	// Nova mirrors add_host into Placement; each drift is then made in
	// Placement alone, as a failed mirror or a hand edit leaves it.
	drift := newAggregate(name("drift"), nil, "novaonly")
	iso := newAggregate(name("iso"), map[string]string{"trait:" + trait: "required"}, "lacking", "having")
	t.Cleanup(func() {
		for _, u := range hosts {
			_ = c.Call("placement", "DELETE", "resource_providers/"+u, nil, nil, 204)
		}
	})
	setPlacementAggregates := func(rp string, aggs ...string) {
		call(t, c, "placement", "PUT", "resource_providers/"+rp+"/aggregates",
			map[string]any{"resource_provider_generation": generation(rp), "aggregates": append([]string{}, aggs...)}, nil, 200)
	}
	setPlacementAggregates(hosts["novaonly"])
	setPlacementAggregates(hosts["placementonly"], drift.UUID)

	sync := func() {
		t.Helper()
		if code, out, errOut := runCLI(t, "", append([]string{"sync", "--db", db}, conn...)...); code != 0 {
			t.Fatalf("sync: %d\n%s\n%s", code, out, errOut)
		}
	}
	sync()
	found := findingsOn(t, db, drift.UUID, iso.UUID)
	want := map[string]string{
		"membership_drift/novaonly":       "in Nova's aggregate " + name("drift") + " but not in Placement's",
		"membership_drift/placementonly":  "in Placement's aggregate " + name("drift") + " but not in Nova's",
		"isolation_trait_missing/lacking": "requires " + trait + "; 1 host(s) lack it: " + name("lacking"),
	}
	got := map[string]realFinding{}
	for _, f := range found {
		for h, u := range hosts {
			if slices.ContainsFunc(f.Objects, func(o struct{ Kind, UUID, Name string }) bool { return o.UUID == u }) {
				got[f.Code+"/"+h] = f
			}
		}
	}
	if len(found) != len(want) || len(got) != len(want) {
		t.Fatalf("doctor found %+v, want %d findings: %v", found, len(want), want)
	}
	for k, frag := range want {
		if f, ok := got[k]; !ok || !strings.Contains(f.Detail, frag) || len(f.Fix) == 0 {
			t.Errorf("%s: %+v, want a fix and a detail with %q", k, f, frag)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Each fix as its own draft (what the Doctor page's "Fix as draft"
	// stores), rolled out as `corral rollout` does.
	for _, k := range slices.Sorted(maps.Keys(want)) {
		st, err := store.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		d, err := st.CreateDraft(context.Background(), cliActor(), "Doctor: "+got[k].Detail)
		if err == nil {
			d, err = st.SetDraftChanges(context.Background(), cliActor(), d.ID, d.Version, got[k].Fix)
		}
		st.Close()
		if err != nil {
			t.Fatalf("%s: the fix as a draft: %v", k, err)
		}
		code, out, errOut := runCLI(t, "", append([]string{"rollout", "--db", db, "--draft", d.ID}, conn...)...)
		if code != 0 || !strings.Contains(out, "rolled out 1 call(s)") {
			t.Fatalf("%s: rollout: %d\n%s\n%s", k, code, out, errOut)
		}
	}

	sync()
	for _, f := range findingsOn(t, db, drift.UUID, iso.UUID) {
		t.Errorf("after the rollouts the doctor still finds %s: %s", f.Code, f.Detail)
	}
	// The cloud itself, read back: Placement's copy follows Nova's, the
	// trait is on the host, and Nova's aggregate is as it was.
	aggsOf := func(rp string) []string {
		var out struct {
			Aggregates []string `json:"aggregates"`
		}
		call(t, c, "placement", "GET", "resource_providers/"+rp+"/aggregates", nil, &out, 200)
		return out.Aggregates
	}
	if a := aggsOf(hosts["novaonly"]); !slices.Equal(a, []string{drift.UUID}) {
		t.Errorf("Placement's aggregates of %s: %v, want [%s]", name("novaonly"), a, drift.UUID)
	}
	if a := aggsOf(hosts["placementonly"]); len(a) != 0 {
		t.Errorf("Placement's aggregates of %s: %v, want none", name("placementonly"), a)
	}
	var traits struct {
		Traits []string `json:"traits"`
	}
	call(t, c, "placement", "GET", "resource_providers/"+hosts["lacking"]+"/traits", nil, &traits, 200)
	if !slices.Contains(traits.Traits, trait) {
		t.Errorf("traits of %s: %v, want %s", name("lacking"), traits.Traits, trait)
	}
	var nova struct {
		Aggregate struct {
			Hosts []string `json:"hosts"`
		} `json:"aggregate"`
	}
	call(t, c, "compute", "GET", fmt.Sprintf("os-aggregates/%d", drift.ID), nil, &nova, 200)
	if !slices.Equal(nova.Aggregate.Hosts, []string{name("novaonly")}) {
		t.Errorf("Nova's hosts of %s: %v, want only %s", name("drift"), nova.Aggregate.Hosts, name("novaonly"))
	}
}
