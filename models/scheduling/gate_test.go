package scheduling

import (
	"strings"
	"testing"

	"corral/models"
)

// The gate asks for confirmation exactly when changes strand servers,
// break groups or leave a pair with no host, names those consequences, and
// its token changes with them.
func TestGateOf(t *testing.T) {
	live := smallRunningWorld(t)
	live.Providers[1].Inventories = map[string]models.Inventory{"VCPU": {Total: 16, AllocationRatio: 1}}
	ls := mustSnapshot(t, live)

	harmless, err := GateOf(ls, []Change{{Op: OpSetMetadata, Aggregate: "gpu", Key: "colour", Value: "blue"}})
	if err != nil {
		t.Fatal(err)
	}
	if harmless.NeedsConfirmation() || harmless.Token != "" || !harmless.Confirmed("") || len(harmless.Consequences()) != 0 {
		t.Errorf("a harmless change needs confirmation: %+v", harmless)
	}
	if harmless.PairsChecked != 2*2 { // p1 and any other project × two flavors
		t.Errorf("checked %d pairs, want 4", harmless.PairsChecked)
	}

	// Taking p1's tag away and giving h2 to p2: p1's servers on h2 are
	// stranded, and p2 appears among the pairs as the change names it.
	tenant := []Change{
		{Op: OpRemoveTenant, Aggregate: "p1-only", Project: "p1"},
		{Op: OpAddTenant, Aggregate: "p1-only", Project: "p2"},
	}
	g, err := GateOf(ls, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if !g.NeedsConfirmation() || len(g.Servers) != 2 || g.Token == "" {
		t.Fatalf("tenant change: %d servers stranded, token %q; want 2 and a token", len(g.Servers), g.Token)
	}
	if g.Confirmed("") || g.Confirmed(harmless.Token) || !g.Confirmed(g.Token) {
		t.Error("the gate takes a confirmation other than its own token")
	}
	lines := strings.Join(g.Consequences(), " | ")
	if !strings.Contains(lines, "strands 2 running servers: db-1 (p1, on h2), web-2 (p1, on h2)") {
		t.Errorf("consequences %q", lines)
	}
	if err := g.Refusal("confirm"); models.KindOf(err) != models.Conflict || models.FieldOf(err) != "confirm" || !strings.Contains(err.Error(), "db-1") {
		t.Errorf("refusal %v", err)
	}

	// Requiring the gpu key of every flavor: m1.small keeps no host for
	// anyone, and every server is stranded. One running server reads
	// "1 running server".
	gpuOnly, err := GateOf(ls, []Change{
		{Op: OpUnsetMetadata, Aggregate: "gpu", Key: "gpu"},
		{Op: OpSetExtraSpec, Flavor: "m1.small", Key: "aggregate_instance_extra_specs:gpu", Value: "a100"},
	})
	if err != nil {
		t.Fatal(err)
	}
	emptied := map[string]bool{}
	for _, p := range gpuOnly.Pairs {
		emptied[p.Project+"/"+p.Flavor] = true
	}
	if !emptied["p1/m1.small"] || !emptied[AnyOtherProject+"/m1.small"] {
		t.Errorf("pairs left with no host %v, want p1 and any other project with m1.small", emptied)
	}
	if gpuOnly.Token == g.Token {
		t.Error("two sets of consequences share a token")
	}
	if !strings.Contains(strings.Join(gpuOnly.Consequences(), " | "), "with no host: ") {
		t.Errorf("consequences %q", gpuOnly.Consequences())
	}

	one, err := GateOf(ls, []Change{{Op: OpAddGroupMember, ServerGroup: "web", Server: "db-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(one.Consequences(), " | "); got != "breaks 1 server group: web (anti-affinity, p1)" {
		t.Errorf("group consequences %q", got)
	}

	// Changes that do not apply are the write path's to refuse.
	if _, err := GateOf(ls, []Change{{Op: OpRemoveTenant, Aggregate: "nosuch", Project: "p1"}}); err == nil {
		t.Error("a change that does not apply passed the gate")
	}
}

// A tenant tag or a server group for a project the world names nowhere
// is reported; known projects (tenant tags, servers, groups, flavor
// access lists) are not.
func TestUnknownProjects(t *testing.T) {
	w := smallRunningWorld(t)
	w.Flavors[0].Projects = []string{"p9"}
	got := UnknownProjects(w, []Change{
		{Op: OpAddTenant, Aggregate: "gpu", Project: "p1"},
		{Op: OpAddTenant, Aggregate: "gpu", Project: "p9"},
		{Op: OpAddTenant, Aggregate: "gpu", Project: "nosuchproject"},
		{Op: OpCreateServerGroup, ServerGroup: "g", Project: "globx", Policy: "affinity"},
		{Op: OpRemoveTenant, Aggregate: "gpu", Project: "gone"},
	})
	if strings.Join(got, ",") != "nosuchproject,globx" {
		t.Errorf("unknown projects %v, want nosuchproject and globx", got)
	}
	if k := KnownProjects(w); strings.Join(k, ",") != "p1,p9" {
		t.Errorf("known projects %v", k)
	}
}
