package scheduling

import (
	"corral/models"
)

// Nova's resource weighers (nova/scheduler/weights/{ram,cpu,disk,io_ops,
// num_instances,compute,cross_cell}.py), over the host state Nova builds
// from the compute node: here the root provider's inventories and usages
// (Placement's copy of the same numbers), the servers corral knows on the
// host, and what the earlier instances of a multi-create took
// (HostState._locked_consume_from_request). Each multiplier may be
// overridden per host by the aggregate metadata key of the option's name
// (nova/scheduler/utils.py get_weight_multiplier).

// hostUse is what the instances placed so far in a multi-create took of a
// host, as consume_from_request counts it.
type hostUse struct {
	ramMB, diskMB, vcpus, instances, ioOps int64
}

// use is what the run's earlier instances took of h.
func (r *Request) use(h *HostState) hostUse {
	if r == nil || r.consumedOn == nil || h == nil || h.Provider == nil {
		return hostUse{}
	}
	return r.consumedOn[h.Provider.Name]
}

// consumeOn counts one instance of the request placed on host name:
// free_ram_mb -= ram, free_disk_mb -= (root + ephemeral) × 1024 (swap is
// not counted, and a boot from volume counts its root disk all the same),
// vcpus_used += vcpus, num_instances += 1, num_io_ops += 1.
func (r *Request) consumeOn(name string) {
	if r.consumedOn == nil {
		r.consumedOn = map[string]hostUse{}
	}
	u := r.consumedOn[name]
	f := r.Flavor
	if f == nil {
		f = &models.Flavor{}
	}
	u.ramMB += int64(f.RAMMB)
	u.diskMB += int64(f.DiskGB+f.EphemeralGB) * 1024
	u.vcpus += int64(f.VCPUs)
	u.instances++
	u.ioOps++
	r.consumedOn[name] = u
}

func inventoryOf(h *HostState, rc string) (models.Inventory, int64, bool) {
	if h == nil || h.Provider == nil {
		return models.Inventory{}, 0, false
	}
	inv, ok := h.Provider.Inventories[rc]
	return inv, h.Provider.Usages[rc], ok
}

// FreeRAMMB is HostState.free_ram_mb: total − reserved − used.
func FreeRAMMB(h *HostState, r *Request) float64 {
	inv, used, _ := inventoryOf(h, "MEMORY_MB")
	return float64(inv.Total - inv.Reserved - used - r.use(h).ramMB)
}

// FreeVCPUs is CPUWeigher's vcpus_total × cpu_allocation_ratio −
// vcpus_used (reserved host CPUs are not subtracted, as in Nova).
func FreeVCPUs(h *HostState, r *Request) float64 {
	inv, used, _ := inventoryOf(h, "VCPU")
	ratio := inv.AllocationRatio
	if ratio == 0 {
		ratio = 1
	}
	return float64(inv.Total)*ratio - float64(used+r.use(h).vcpus)
}

// FreeDiskMB is HostState.free_disk_mb: (total − reserved − used GiB) ×
// 1024. Nova takes the smaller of that and the driver's
// disk_available_least, which Placement does not hold.
func FreeDiskMB(h *HostState, r *Request) float64 {
	inv, used, _ := inventoryOf(h, "DISK_GB")
	return float64((inv.Total-inv.Reserved-used)*1024 - r.use(h).diskMB)
}

// resourceWeigher is one of Nova's resource weighers.
type resourceWeigher struct {
	name, key string
	weigh     func(h *HostState, r *Request) float64
	mult      func(s models.Settings) float64
}

func (w resourceWeigher) Name() string                           { return w.name }
func (w resourceWeigher) Weigh(h *HostState, r *Request) float64 { return w.weigh(h, r) }
func (w resourceWeigher) Multiplier(s models.Settings) float64   { return w.mult(s) }

// HostMultiplier implements HostWeightMultiplier.
func (w resourceWeigher) HostMultiplier(h *HostState, s models.Settings) float64 {
	return aggregateMultiplier(h, w.key, w.mult(s))
}

func (w resourceWeigher) multiplierKeys() []string { return []string{w.key} }

// resourceWeighers are Nova's weighers beyond the server-group ones, by
// class name.
var resourceWeighers = map[string]resourceWeigher{
	"RAMWeigher": {"RAMWeigher", "ram_weight_multiplier", FreeRAMMB,
		func(s models.Settings) float64 { return s.RAMWeightMultiplier }},
	"CPUWeigher": {"CPUWeigher", "cpu_weight_multiplier", FreeVCPUs,
		func(s models.Settings) float64 { return s.CPUWeightMultiplier }},
	"DiskWeigher": {"DiskWeigher", "disk_weight_multiplier", FreeDiskMB,
		func(s models.Settings) float64 { return s.DiskWeightMultiplier }},
	// num_io_ops: instances in I/O-heavy task states; corral knows of
	// none, so only this request's earlier instances count.
	"IoOpsWeigher": {"IoOpsWeigher", "io_ops_weight_multiplier",
		func(h *HostState, r *Request) float64 { return float64(r.use(h).ioOps) },
		func(s models.Settings) float64 { return s.IoOpsWeightMultiplier }},
	"NumInstancesWeigher": {"NumInstancesWeigher", "num_instances_weight_multiplier",
		func(h *HostState, r *Request) float64 { return float64(int64(h.instances()) + r.use(h).instances) },
		func(s models.Settings) float64 { return s.NumInstancesWeightMultiplier }},
	// failed_builds: corral knows of no failed build, so every host
	// weighs 0 and the weigher never tells hosts apart.
	"BuildFailureWeigher": {"BuildFailureWeigher", "build_failure_weight_multiplier",
		func(*HostState, *Request) float64 { return 0 },
		func(s models.Settings) float64 { return s.BuildFailureWeightMultiplier }},
	// CrossCellWeigher weighs only cross-cell moves; a boot weighs 0.
	"CrossCellWeigher": {"CrossCellWeigher", "cross_cell_move_weight_multiplier",
		func(*HostState, *Request) float64 { return 0 },
		func(models.Settings) float64 { return 1000000.0 }},
}

// instances is the number of servers corral knows on the host.
func (h *HostState) instances() int {
	if h == nil {
		return 0
	}
	return h.numInstances
}

// WeighersFor are the weighers weight_classes enables for the release, in
// Nova's order; the ones corral does not model are left out (the trace
// names them).
func WeighersFor(s models.Settings) []Weigher {
	var out []Weigher
	for _, w := range models.EnabledWeighers(s.WeightClasses, s.NovaRelease) {
		switch {
		case w.NotModelled:
		case w.Name == WeigherSoftAffinity:
			out = append(out, ServerGroupSoftAffinityWeigher{})
		case w.Name == WeigherSoftAntiAffinity:
			out = append(out, ServerGroupSoftAntiAffinityWeigher{})
		default:
			out = append(out, resourceWeighers[w.Name])
		}
	}
	return out
}

// notModelledWeighers names the enabled weighers corral leaves out.
func notModelledWeighers(s *models.Settings) []string {
	var out []string
	for _, w := range models.EnabledWeighers(s.WeightClasses, s.NovaRelease) {
		if w.NotModelled {
			out = append(out, w.Name)
		}
	}
	return out
}

// weighsUse reports whether a weigher of the run reads what earlier
// instances took: then each instance of a multi-create is weighed anew.
// filtersUse reports whether a host filter of the run reads what the
// earlier instances took (instance and I/O-op counts, free RAM): then
// each round judges the hosts again, as Nova's does.
func (r *run) filtersUse() bool {
	for si := range r.stages {
		if u, ok := r.stages[si].f.(interface{ readsUse() bool }); ok && u.readsUse() {
			return true
		}
	}
	return false
}

func (r *run) weighsUse() bool {
	for _, w := range r.weighers {
		if _, ok := w.w.(resourceWeigher); ok {
			return true
		}
	}
	return false
}
