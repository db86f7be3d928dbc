package models

import (
	"slices"
	"strings"
)

// NovaWeigher is one of Nova's host weighers (nova/scheduler/weights), by
// the class path weight_classes names it with.
type NovaWeigher struct {
	Class string // nova.scheduler.weights.ram.RAMWeigher
	Name  string // RAMWeigher
	// Since is the first release that has it (all_weighers includes it
	// from then on).
	Since string
	// NotModelled: corral leaves it out of the weights and says so.
	NotModelled bool
}

// AllWeighers is weight_classes' value for every weigher of the release.
const AllWeighers = "nova.scheduler.weights.all_weighers"

// NovaWeighers are Nova's weighers, 26.0.0 (Zed) to 33.0.0.
var NovaWeighers = []NovaWeigher{
	{"nova.scheduler.weights.ram.RAMWeigher", "RAMWeigher", NovaZed, false},
	{"nova.scheduler.weights.cpu.CPUWeigher", "CPUWeigher", NovaZed, false},
	{"nova.scheduler.weights.disk.DiskWeigher", "DiskWeigher", NovaZed, false},
	{"nova.scheduler.weights.io_ops.IoOpsWeigher", "IoOpsWeigher", NovaZed, false},
	{"nova.scheduler.weights.compute.BuildFailureWeigher", "BuildFailureWeigher", NovaZed, false},
	{"nova.scheduler.weights.affinity.ServerGroupSoftAffinityWeigher", "ServerGroupSoftAffinityWeigher", NovaZed, false},
	{"nova.scheduler.weights.affinity.ServerGroupSoftAntiAffinityWeigher", "ServerGroupSoftAntiAffinityWeigher", NovaZed, false},
	{"nova.scheduler.weights.cross_cell.CrossCellWeigher", "CrossCellWeigher", NovaZed, false},
	{"nova.scheduler.weights.pci.PCIWeigher", "PCIWeigher", NovaZed, true},
	{"nova.scheduler.weights.metrics.MetricsWeigher", "MetricsWeigher", NovaZed, true},
	{"nova.scheduler.weights.num_instances.NumInstancesWeigher", "NumInstancesWeigher", "bobcat", false},
	{"nova.scheduler.weights.hypervisor_version.HypervisorVersionWeigher", "HypervisorVersionWeigher", "bobcat", true},
	{"nova.scheduler.weights.image_props.ImagePropsWeigher", "ImagePropsWeigher", "epoxy", true},
}

// NovaDefaultWeightClasses is corral's default weight_classes: the two
// server-group weighers it has always applied. A nova.conf import that
// does not set weight_classes takes Nova's default, AllWeighers.
const NovaDefaultWeightClasses = "nova.scheduler.weights.affinity.ServerGroupSoftAffinityWeigher,nova.scheduler.weights.affinity.ServerGroupSoftAntiAffinityWeigher"

// EnabledWeighers are the weighers weight_classes enables for the release,
// in NovaWeighers' order, each once. Unknown classes are left out (the
// setting's check refuses them).
func EnabledWeighers(classes, release string) []NovaWeigher {
	var out []NovaWeigher
	list := splitClasses(classes)
	for _, w := range NovaWeighers {
		if !NovaReleaseAtLeast(release, w.Since) {
			continue
		}
		if slices.Contains(list, AllWeighers) || slices.Contains(list, w.Class) {
			out = append(out, w)
		}
	}
	return out
}

func splitClasses(v string) []string {
	var out []string
	for _, c := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' }) {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// checkWeightClasses is weight_classes' check: known classes (or
// all_weighers), kept joined by commas.
func checkWeightClasses(v string) (string, error) {
	list := splitClasses(v)
	for _, c := range list {
		if c != AllWeighers && !slices.ContainsFunc(NovaWeighers, func(w NovaWeigher) bool { return w.Class == c }) {
			return "", E(Invalid, "weight_classes", "unknown weigher class %q (known: %s or nova.scheduler.weights.<module>.<Class>)", c, AllWeighers)
		}
	}
	return strings.Join(list, ","), nil
}
