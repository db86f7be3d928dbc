package novatest_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"corral/models/cloud/novatest"
	"corral/models/scheduling"
)

// sampleCloud is a cloud directory holding nova-scheduler's DEBUG lines
// recorded for one request under Zed's defaults, and a request that had no
// allocation candidates.
func sampleCloud(t *testing.T) *novatest.Cloud {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "scheduler-sample.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "nova"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nova", "scheduler.log"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return &novatest.Cloud{Dir: dir}
}

// TestDecisionReadsTheSchedulerLog: the filtered hosts, the weights and
// the filters' counts of a request; a request Placement had no candidate
// for; a request the log does not name is an error.
func TestDecisionReadsTheSchedulerLog(t *testing.T) {
	c := sampleCloud(t)
	d, err := c.Decision("req-a46d92ac-9e42-4998-85d9-9f23b1d14d49")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Eligible(), []string{"h6", "h2", "h4", "h3", "h5", "h1"}; !slices.Equal(got, want) {
		t.Errorf("eligible %v, want %v", got, want)
	}
	if got := d.Best(1); !slices.Equal(got, []string{"h1"}) {
		t.Errorf("best of 1: %v", got)
	}
	// h6 and h2 weigh the same: a subset of 2 ends in a tie, kept whole.
	if got := d.Best(2); !slices.Equal(got, []string{"h1", "h6", "h2"}) {
		t.Errorf("best of 2: %v", got)
	}
	if len(d.FilterCounts) != 5 || d.FilterCounts[0] != "ComputeFilter=6" || d.NoCandidates {
		t.Errorf("filters %v, no candidates %v", d.FilterCounts, d.NoCandidates)
	}
	d, err = c.Decision("req-00000000-0000-4000-8000-00000000000e")
	if err != nil || !d.NoCandidates || len(d.Eligible()) != 0 {
		t.Errorf("no candidates: %+v, %v", d, err)
	}
	if _, err := c.Decision("req-00000000-0000-4000-8000-0000000000ff"); err == nil {
		t.Error("a request the scheduler never logged has a decision")
	}
}

// TestCompareJudgesSetsAndTies: eligible hosts are compared as sets; the
// best hosts too, with the host nova chose among corral's; a part not
// marked must-agree makes the request reported only.
func TestCompareJudgesSetsAndTies(t *testing.T) {
	d, err := sampleCloud(t).Decision("req-a46d92ac-9e42-4998-85d9-9f23b1d14d49")
	if err != nil {
		t.Fatal(err)
	}
	landed := novatest.Booted{Servers: []novatest.BootedServer{{Status: "ACTIVE", Host: "h1"}}}
	w := func(x float64) *float64 { return &x }
	trace := func(weights map[string]float64, excluded ...string) *scheduling.Trace {
		tr := &scheduling.Trace{}
		for _, h := range []string{"h1", "h2", "h3", "h4", "h5", "h6"} {
			if slices.Contains(excluded, h) {
				tr.Hosts = append(tr.Hosts, scheduling.HostEntry{Name: h, Stage: "placement"})
				continue
			}
			tr.Hosts = append(tr.Hosts, scheduling.HostEntry{Name: h, Passed: true, Weight: w(weights[h])})
		}
		return tr
	}
	parts := []string{pResources, wIoOps}
	o := compare(zedDefaults, parts, d, landed, trace(map[string]float64{"h1": 2}), false)
	if !o.eligibleAgree || !o.topAgree || !o.mustEligible || o.mustTop {
		t.Errorf("same hosts, same best: %+v", o)
	}
	// Every weight equal: corral's best are all six, nova's one.
	if o = compare(zedDefaults, parts, d, landed, trace(nil), false); o.topAgree {
		t.Errorf("a tie of six against nova's one best host agrees: %+v", o)
	}
	if o = compare(restricted, []string{pResources}, d, landed, trace(map[string]float64{"h1": 2}, "h5"), false); o.eligibleAgree || !o.mustEligible {
		t.Errorf("corral excluded a host nova kept: %+v", o)
	}
	if o = compare(restricted, []string{fImageProps}, d, landed, trace(nil), false); o.mustEligible {
		t.Errorf("a part not modelled yet must agree: %+v", o)
	}
}
