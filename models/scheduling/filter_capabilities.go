package scheduling

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"corral/models"
)

// ComputeCapabilitiesFilter is nova's filter of that name
// (nova/scheduler/filters/compute_capabilities_filter.py
// _satisfies_extra_specs): each flavor extra spec that is unscoped and
// names an attribute of Nova's HostState (or a key of its stats), or is
// scoped capabilities:, is matched with extra_specs_ops.match against the
// host's value. Other scopes, and unscoped keys HostState lacks (ssd=true:
// the trap is AggregateInstanceExtraSpecsFilter's, which reads unscoped
// keys as aggregate metadata), are ignored. From nova 29 (Caracal) on,
// hw:maxphysaddr_bits is read as capabilities:cpu_info:maxphysaddr:bits
// >= N.
type ComputeCapabilitiesFilter struct{}

// Name implements HostFilter.
func (ComputeCapabilitiesFilter) Name() string { return models.FilterComputeCapabilities }

// hostStateUnknown are HostState attributes (26.0.0 … 33.0.0) corral
// cannot know (hypervisor_type, hypervisor_version and host_ip unless a
// sync read the compute node): a spec on one passes here, and the reason
// says so.
var hostStateUnknown = []string{
	"cpu_info", "hypervisor_type", "hypervisor_version", "supported_instances", "host_ip", "metrics", "numa_topology",
	"pci_stats", "limits", "instances", "aggregates", "cell_uuid", "updated", "service", "stats", "disk_mb_used",
	"allocation_candidates",
}

// capabilityValue is str(getattr(host_state, name)) for the attributes
// corral derives from the host's root provider and servers; known is
// false for the others, attr false when HostState has no such attribute.
func capabilityValue(h *HostState, r *Request, name string) (v string, known, attr bool) {
	num := func(f float64) string { return pyFloatOrInt(f) }
	inv := func(rc string) models.Inventory { i, _, _ := inventoryOf(h, rc); return i }
	switch name {
	case "free_ram_mb":
		return num(FreeRAMMB(h, r)), true, true
	case "free_disk_mb":
		return num(FreeDiskMB(h, r)), true, true
	case "vcpus_total":
		return strconv.FormatInt(inv("VCPU").Total, 10), true, true
	case "vcpus_used":
		_, used, _ := inventoryOf(h, "VCPU")
		return strconv.FormatInt(used+r.use(h).vcpus, 10), true, true
	case "total_usable_ram_mb":
		return strconv.FormatInt(inv("MEMORY_MB").Total, 10), true, true
	case "total_usable_disk_gb":
		return strconv.FormatInt(inv("DISK_GB").Total, 10), true, true
	case "num_instances":
		return strconv.Itoa(h.instances() + int(r.use(h).instances)), true, true
	case "num_io_ops":
		return strconv.FormatInt(r.use(h).ioOps, 10), true, true
	case "failed_builds":
		return "0", true, true
	case "ram_allocation_ratio":
		return pyFloat(inv("MEMORY_MB").AllocationRatio), true, true
	case "cpu_allocation_ratio":
		return pyFloat(inv("VCPU").AllocationRatio), true, true
	case "disk_allocation_ratio":
		return pyFloat(inv("DISK_GB").AllocationRatio), true, true
	case "host", "nodename", "hypervisor_hostname":
		return hfHostName(h), true, true
	case "uuid":
		if h != nil && h.Provider != nil {
			return h.Provider.UUID, true, true
		}
		return "", true, true
	case "hypervisor_type", "hypervisor_version", "host_ip":
		// Known when a sync read the compute node (os-hypervisors).
		if c := hostCompute(h); c != nil && c.HypervisorType != "" {
			switch name {
			case "hypervisor_type":
				return c.HypervisorType, true, true
			case "hypervisor_version":
				return strconv.FormatInt(c.HypervisorVersion, 10), true, true
			}
			if c.HostIP != "" {
				return c.HostIP, true, true
			}
		}
	}
	// Compute node stats (num_vm_active, num_proj_<id>, io_workload…)
	// are not synced either.
	stat := strings.HasPrefix(name, "num_") || name == "io_workload"
	return "", false, stat || slices.Contains(hostStateUnknown, name)
}

func hostCompute(h *HostState) *models.ComputeHost {
	if h == nil || h.Provider == nil {
		return nil
	}
	return h.Provider.Compute
}

// pyFloat is str() of a Python float.
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// pyFloatOrInt is str() of an int-valued number Nova keeps as an int.
func pyFloatOrInt(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Filter implements HostFilter.
func (ComputeCapabilitiesFilter) Filter(h *HostState, r *Request) Verdict {
	if r == nil || r.Flavor == nil {
		return Verdict{Passed: true, Reason: "the flavor has no extra specs"}
	}
	specs := r.Flavor.ExtraSpecs
	if bits, ok := specs["hw:maxphysaddr_bits"]; ok && models.NovaReleaseAtLeast(r.Settings.NovaRelease, "caracal") {
		specs = maps2(specs)
		delete(specs, "hw:maxphysaddr_bits")
		specs["capabilities:cpu_info:maxphysaddr:bits"] = ">= " + bits
	}
	var unknown []string
	for _, key := range hfSortedKeys(specs) {
		scope := strings.Split(key, ":")
		if len(scope) > 1 {
			if scope[0] != "capabilities" {
				continue
			}
			scope = scope[1:]
		}
		value, known, attr := capabilityValue(h, r, scope[0])
		if len(scope) == 1 && !known && !attr {
			if len(strings.Split(key, ":")) == 1 {
				continue // not a HostState attribute: nova ignores the key
			}
			return Verdict{Reason: fmt.Sprintf("extra spec %s: the host state has no capability %q", key, scope[0]),
				Summary: fmt.Sprintf("extra spec %s: the host state has no such capability", key)}
		}
		if !known || len(scope) > 1 {
			// A nested capability (cpu_info:…) or an attribute corral
			// does not hold: it cannot judge.
			unknown = append(unknown, key)
			continue
		}
		req, err := cachedRequirement(specs[key])
		if err != nil {
			return Verdict{Reason: fmt.Sprintf("extra spec %s=%q: %v", key, specs[key], err)}
		}
		ok, err := req.Match(value)
		if err != nil {
			return Verdict{Reason: fmt.Sprintf("extra spec %s=%q against %s: %v", key, specs[key], value, err)}
		}
		if !ok {
			return Verdict{Reason: fmt.Sprintf("extra spec %s=%q does not match the host's %s=%s", key, specs[key], scope[0], value),
				Summary: fmt.Sprintf("extra spec %s=%q does not match the host's %s", key, specs[key], scope[0])}
		}
	}
	if len(unknown) > 0 {
		return Verdict{Passed: true, Reason: "corral cannot know the host's " + strings.Join(unknown, ", ") + " (not synced): passed, Nova may differ"}
	}
	return Verdict{Passed: true, Reason: "the flavor's capability specs match the host state"}
}

func maps2(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
