package novatest_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/novatest"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// config is one nova.conf of the scheduler: Nova runs with it, and corral
// takes its settings from the same file (settings import).
type config struct {
	name string
	conf string
	// on are the filters and weighers it enables: every request in it
	// exercises them. off are the scenario parts it turns off.
	on, off []string
	subset  int // host_subset_size
	// enforce: requests whose every part must agree fail the test when
	// they do not; otherwise agreement is only reported.
	enforce bool
}

var allWeighers = []string{wRAM, wCPU, wDisk, wIoOps, wPCI, wSoftAffinity, wSoftAnti, wBuildFailure, wCrossCell, wMetrics}

// restricted is Nova restricted to what corral models: its filters and
// weighers only, and the request filters corral has turned on.
var restricted = config{name: "restricted", enforce: true, subset: 1,
	on: []string{fCompute, fCapabilities, fZoneFilter, fAggInstances, fSameHost, fDifferentHost,
		fExtraSpecs, fTenant, fAntiAffinity, fAffinity, wSoftAffinity, wSoftAnti},
	off: []string{fImageProps, wRAM, wCPU, wDisk, wIoOps, wPCI, wBuildFailure, wCrossCell, wMetrics},
	conf: `[scheduler]
limit_tenants_to_placement_aggregate = True
placement_aggregate_required_for_tenants = False
query_placement_for_availability_zone = True
enable_isolated_aggregate_filtering = True
[filter_scheduler]
enabled_filters = ComputeFilter,ComputeCapabilitiesFilter,AvailabilityZoneFilter,AggregateNumInstancesFilter,SameHostFilter,DifferentHostFilter,AggregateInstanceExtraSpecsFilter,AggregateMultiTenancyIsolation,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter
weight_classes = nova.scheduler.weights.affinity.ServerGroupSoftAffinityWeigher,nova.scheduler.weights.affinity.ServerGroupSoftAntiAffinityWeigher
host_subset_size = 1
shuffle_best_same_weighed_hosts = False
soft_affinity_weight_multiplier = 1.0
soft_anti_affinity_weight_multiplier = 1.0
`}

// zedDefaults is Zed's defaults for every scheduling option, written out
// so that corral's settings import reads the same values Nova uses.
var zedDefaults = config{name: "zed-defaults", subset: 1,
	on:  append([]string{fCompute, fCapabilities, fImageProps, fAntiAffinity, fAffinity}, allWeighers...),
	off: []string{fExtraSpecs, fTenant, pTenant, pIsolate},
	conf: `[scheduler]
limit_tenants_to_placement_aggregate = False
placement_aggregate_required_for_tenants = False
query_placement_for_availability_zone = True
enable_isolated_aggregate_filtering = False
[filter_scheduler]
enabled_filters = ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter
weight_classes = nova.scheduler.weights.all_weighers
host_subset_size = 1
shuffle_best_same_weighed_hosts = False
soft_affinity_weight_multiplier = 1.0
soft_anti_affinity_weight_multiplier = 1.0
`}

// outcome is one boot judged by both.
type outcome struct {
	config, scenario string
	step             int
	parts            []string // the parts this request exercises in its configuration
	own              []string // … of them, its scenario's
	mustEligible     bool     // every filter and request part must agree
	mustTop          bool     // … and every weigher too
	eligibleAgree    bool
	topAgree         bool
	detail           string
	// How long corral's sync and preview, and nova's boot, took.
	corralTime, bootTime time.Duration
}

// TestCorralAgreesWithNovaScheduler boots every scenario on a real Nova
// (Zed) and compares, request by request, the hosts its scheduler let
// through its filters and the host it chose with corral's preview of the
// same request on the same synced state: under a nova.conf restricted to
// what corral models they must agree; under Zed's defaults the agreement
// is reported per filter, weigher and request part.
func TestCorralAgreesWithNovaScheduler(t *testing.T) {
	novatest.SkipOrFail(t)
	started := time.Now()
	dir := t.TempDir()
	c, err := novatest.Start(dir, hosts, images, restricted.conf)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	t.Logf("cloud of %d computes up in %s", len(hosts), time.Since(started).Round(time.Second))
	createFlavors(t, c)
	ctx := context.Background()
	cl, err := cloud.Connect(ctx, cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: c.PlacementURL, Token: "admin:admin"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	st := storetest.Open(t)
	var all []outcome
	for i, cfg := range []config{restricted, zedDefaults} {
		if i > 0 {
			if err := c.RestartScheduler(cfg.conf); err != nil {
				t.Fatal(err)
			}
		}
		t0 := time.Now()
		n := 0
		for _, sc := range scenarios {
			if sc.restrictedOnly && !cfg.enforce {
				continue
			}
			n++
			if dl, ok := t.Deadline(); ok && time.Until(dl) < 2*time.Minute {
				t.Errorf("%s: stopped before %s: the test's deadline is near", cfg.name, sc.name)
				break
			}
			t.Run(cfg.name+"/"+sc.name, func(t *testing.T) {
				all = append(all, runScenario(t, c, cl, st, cfg, sc)...)
			})
		}
		t.Logf("%s: %d scenarios in %s", cfg.name, n, time.Since(t0).Round(time.Second))
	}
	report(t, all, restricted, zedDefaults)
	t.Logf("whole differential test: %s", time.Since(started).Round(time.Second))
	keepLogs(t, dir)
}

// runScenario sets the scenario up, boots its requests one by one, each
// compared with corral's preview on the state synced just before it, and
// undoes the setup.
func runScenario(t *testing.T, c *novatest.Cloud, cl *cloud.Client, st *store.Store, cfg config, sc scenario) []outcome {
	e := &env{t: t, c: c, run: cfg.name, groups: map[string]string{}, aggs: map[string]int{}}
	defer e.undo()
	if sc.setup != nil {
		sc.setup(e)
	}
	parts := relevant(sc.parts, cfg)
	var out []outcome
	var lastBoot time.Time
	var firstServers []string // each boot's first server
	hint := func(step int) []string {
		if step < 1 || step > len(firstServers) || firstServers[step-1] == "" {
			return nil
		}
		return []string{firstServers[step-1]}
	}
	for i, b := range sc.boots {
		spec := &scheduling.RequestSpec{ProjectID: orAdmin(b.project), UserID: "admin", Flavor: scheduling.FlavorRef{Name: b.flavor},
			AvailabilityZone: b.zone, ServerGroup: e.groups[b.group], NumInstances: max(b.count, 1)}
		same, different := hint(b.sameHostAs), hint(b.differentHostFrom)
		if same != nil || different != nil {
			spec.SchedulerHints = &scheduling.SchedulerHints{SameHost: same, DifferentHost: different}
		}
		// The image booted, by the properties scheduling reads (corral
		// does not sync Glance: the request carries them inline).
		for _, im := range images {
			if im.ID == b.image && len(im.Properties) > 0 {
				spec.Image = &scheduling.ImageSpec{Properties: im.Properties}
			}
		}
		t0 := time.Now()
		tr := corralTrace(t, cl, st, cfg, spec)
		t1 := time.Now()
		// The soft weighers read the scheduler's view of each host's
		// instances, which the compute casts to it after the boot.
		time.Sleep(time.Until(lastBoot.Add(time.Second)))
		image := b.image
		if image == "" {
			image = imagePlain
		}
		booted, err := c.Boot(novatest.Boot{Name: fmt.Sprintf("%s-%s-%d", cfg.name, sc.name, i), Project: b.project,
			Flavor: b.flavor, Image: image, Zone: b.zone, Group: e.groups[b.group], Count: b.count, SameHost: same, DifferentHost: different})
		if err != nil {
			t.Fatal(err)
		}
		first := ""
		if len(booted.Servers) > 0 {
			first = booted.Servers[0].ID
		}
		firstServers = append(firstServers, first)
		t2 := time.Now()
		lastBoot = t2
		d, err := c.Decision(booted.RequestID)
		if err != nil {
			t.Fatal(err)
		}
		o := compare(cfg, parts, d, booted, tr, b.count > 1)
		o.config, o.scenario, o.step = cfg.name, sc.name, i+1
		o.own = relevant(sc.parts, config{off: cfg.off})
		o.corralTime, o.bootTime = t1.Sub(t0), t2.Sub(t1)
		switch {
		case cfg.enforce && o.mustEligible && !o.eligibleAgree:
			t.Errorf("request %d: corral's eligible hosts differ from nova-scheduler's (parts %v)\n%s", i+1, parts, o.detail)
		case cfg.enforce && o.mustTop && !o.topAgree:
			t.Errorf("request %d: corral's top hosts differ from the host nova-scheduler chose (parts %v)\n%s", i+1, parts, o.detail)
		case !o.eligibleAgree || !o.topAgree:
			t.Logf("request %d differs (reported, not enforced; parts %v)\n%s", i+1, parts, o.detail)
		}
		out = append(out, o)
	}
	return out
}

func orAdmin(project string) string {
	if project == "" {
		return "admin"
	}
	return project
}

// relevant are the scenario's parts the configuration keeps, and the
// configuration's own filters and weighers.
func relevant(parts []string, cfg config) []string {
	var out []string
	for _, p := range append(slices.Clone(parts), cfg.on...) {
		if !slices.Contains(cfg.off, p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// corralTrace syncs the cloud into the store and runs corral's preview of
// spec on it, with the settings imported from cfg's nova.conf.
func corralTrace(t *testing.T, cl *cloud.Client, st *store.Store, cfg config, spec *scheduling.RequestSpec) *scheduling.Trace {
	t.Helper()
	ctx := context.Background()
	if _, err := cloud.Sync(ctx, st, cl, models.Actor{Name: "novatest", Via: "cli"}, cloud.SyncOptions{Connection: "novatest"}); err != nil {
		t.Fatal(err)
	}
	w, _, err := st.LoadWorld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := cloud.ParseNovaConf(strings.NewReader(cfg.conf))
	if err != nil {
		t.Fatal(err)
	}
	if w.Settings, _, err = cloud.SettingsFromNovaConf(w.Settings, conf); err != nil {
		t.Fatal(err)
	}
	snap, err := scheduling.NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	p, err := scheduling.RunPreview(snap, nil, spec)
	if err != nil {
		t.Fatal(err)
	}
	return p.Trace
}

// compare judges one request: the eligible hosts as sets; the chosen host
// as nova's best hosts (its highest weights, host_subset_size of them
// with ties) against corral's, the host nova chose among corral's. A
// multi-create request is judged on its first instance's eligible hosts
// and on whether all its instances were placed.
func compare(cfg config, parts []string, d novatest.Decision, booted novatest.Booted, tr *scheduling.Trace, multi bool) outcome {
	o := outcome{parts: parts, mustEligible: true, mustTop: true}
	for _, p := range parts {
		isWeigher := strings.HasSuffix(p, "Weigher")
		if !mustAgree[p] {
			o.mustTop = false
			o.mustEligible = o.mustEligible && isWeigher
		}
	}
	novaEligible := sorted(d.Eligible())
	novaBest := sorted(d.Best(cfg.subset))
	var corralEligible []string
	weights := map[string]float64{}
	for _, h := range tr.Hosts {
		if h.Passed || h.Round >= 2 {
			corralEligible = append(corralEligible, h.Name)
		}
		if h.Passed {
			weights[h.Name] = 0
			if h.Weight != nil {
				weights[h.Name] = *h.Weight
			}
		}
	}
	corralEligible = sorted(corralEligible)
	corralBest := best(weights, cfg.subset)
	corralPlaced := tr.Error == nil
	chosen := booted.Hosts()
	o.eligibleAgree = slices.Equal(novaEligible, corralEligible)
	switch {
	case multi || !booted.Placed() || !corralPlaced:
		o.topAgree = booted.Placed() == corralPlaced
	default:
		o.topAgree = slices.Equal(novaBest, corralBest) && len(chosen) == 1 && slices.Contains(corralBest, chosen[0])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  nova:   eligible %v, best %v, landed on %v (placed %v)", novaEligible, novaBest, chosen, booted.Placed())
	if d.NoCandidates {
		b.WriteString(", no allocation candidates")
	}
	fmt.Fprintf(&b, ", filters %v\n  corral: eligible %v, best %v (placed %v), query %s", d.FilterCounts, corralEligible, corralBest, corralPlaced, tr.PlacementQuery)
	for _, h := range tr.Hosts {
		if !h.Passed && slices.Contains(novaEligible, h.Name) {
			fmt.Fprintf(&b, "\n    corral excluded %s at %s: %s", h.Name, h.Stage, h.Reason)
		}
	}
	if len(booted.Servers) > 0 && booted.Servers[0].Fault != "" {
		fmt.Fprintf(&b, "\n  nova's fault: %s", booted.Servers[0].Fault)
	}
	o.detail = b.String()
	return o
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// best are the hosts whose weight is at least the subset-th highest.
func best(weights map[string]float64, subset int) []string {
	if len(weights) == 0 {
		return nil
	}
	ws := slices.Collect(maps.Values(weights))
	sort.Sort(sort.Reverse(sort.Float64Slice(ws)))
	cut := ws[min(max(subset, 1), len(ws))-1]
	var out []string
	for h, w := range weights {
		if w >= cut {
			out = append(out, h)
		}
	}
	return sorted(out)
}

// report logs the agreement per configuration and per part a scenario
// exercises (the configuration's own filters and weighers act on every
// request: its total is theirs).
func report(t *testing.T, all []outcome, cfgs ...config) {
	t.Helper()
	type tally struct {
		n, eligible, top     int
		corralTime, bootTime time.Duration
	}
	byConfig := map[string]*tally{}
	byPart := map[string]*tally{}
	var configs []string
	for _, o := range all {
		if byConfig[o.config] == nil {
			byConfig[o.config] = &tally{}
			configs = append(configs, o.config)
		}
		add := func(x *tally) {
			x.n++
			x.corralTime += o.corralTime
			x.bootTime += o.bootTime
			if o.eligibleAgree {
				x.eligible++
			}
			if o.topAgree {
				x.top++
			}
		}
		add(byConfig[o.config])
		for _, p := range o.own {
			k := o.config + "\t" + p
			if byPart[k] == nil {
				byPart[k] = &tally{}
			}
			add(byPart[k])
		}
	}
	var b strings.Builder
	for _, cfg := range configs {
		x := byConfig[cfg]
		fmt.Fprintf(&b, "%s: eligible hosts agree on %d of %d requests, best host on %d of %d (corral's syncs and previews %s, nova's boots %s)\n",
			cfg, x.eligible, x.n, x.top, x.n, x.corralTime.Round(time.Second), x.bootTime.Round(time.Second))
		for _, c := range cfgs {
			if c.name == cfg {
				fmt.Fprintf(&b, "  every request: %s\n", strings.Join(c.on, ", "))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(byPart)) {
			if c, p, _ := strings.Cut(k, "\t"); c == cfg {
				y := byPart[k]
				fmt.Fprintf(&b, "  %-34s %2d requests  eligible %2d/%-2d  best %2d/%-2d  must agree: %v\n", p, y.n, y.eligible, y.n, y.top, y.n, mustAgree[p])
			}
		}
	}
	t.Log("agreement with nova-scheduler:\n" + b.String())
}

// keepLogs copies the cloud's directory (nova's logs among it), which the
// test removes, to NOVATEST_LOGS when that names a directory.
func keepLogs(t *testing.T, dir string) {
	dst := os.Getenv("NOVATEST_LOGS")
	if dst == "" {
		return
	}
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Log(err)
	}
}
