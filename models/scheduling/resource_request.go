package scheduling

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"corral/models"
	"corral/models/placement"
)

// ResourceRequest is what Nova asks Placement for one instance, built as
// nova.scheduler.utils.ResourceRequest.from_request_spec builds it (the
// same in every release corral models, 26.0.0 to 33.0.0, for the parts
// below): the flavor's extra specs first (resources[S]:, trait[S]:,
// group_policy), then the image's required traits, then CPU pinning
// (hw:cpu_policy=dedicated asks PCPU instead of VCPU), then the flavor's
// own sizes where no extra spec named the class.
type ResourceRequest struct {
	Groups      []placement.Group // the unnumbered group first, then by suffix
	GroupPolicy string            // "", "none" or "isolate"
	// RootForbidden are the traits no root provider may have: Nova's
	// compute_status_filter always forbids COMPUTE_STATUS_DISABLED.
	RootForbidden []string
	// Skipped says what Nova would log a warning for and ignore.
	Skipped []string
}

// Image properties the resource request reads (nova/objects/image_meta.py
// ImageMetaProps: trait:<T>=required becomes traits_required).
const (
	imageCPUPolicy       = "hw_cpu_policy"
	imageCPUThreadPolicy = "hw_cpu_thread_policy"
)

// TraitComputeStatusDisabled is the trait nova-compute sets on the root
// provider of a disabled compute service.
const TraitComputeStatusDisabled = "COMPUTE_STATUS_DISABLED"

// NovaResourceRequest builds the request for flavor f, image properties
// image (nil: none) and a boot from volume (no root disk asked).
func NovaResourceRequest(f *models.Flavor, image map[string]string, isBFV bool) ResourceRequest {
	rr := ResourceRequest{RootForbidden: []string{TraitComputeStatusDisabled}}
	if f == nil {
		f = &models.Flavor{}
	}
	b := newRequestBuilder()
	// _process_extra_specs: nova walks the dict; keys are unique, so the
	// order matters only for which warning comes first.
	for _, k := range slices.Sorted(mapKeys(f.ExtraSpecs)) {
		v := f.ExtraSpecs[k]
		if k == "group_policy" {
			// _add_group_policy: anything but none/isolate is ignored.
			if v == "none" || v == "isolate" {
				rr.GroupPolicy = v
			} else {
				rr.Skipped = append(rr.Skipped, fmt.Sprintf("group_policy=%q is neither none nor isolate: nova ignores it", v))
			}
			continue
		}
		if m := resourcesKeyRE.FindStringSubmatch(k); m != nil {
			if note := b.addResource(m[1], m[2], v); note != "" {
				rr.Skipped = append(rr.Skipped, k+": "+note)
			}
			continue
		}
		if m := traitKeyRE.FindStringSubmatch(k); m != nil {
			b.addTrait(m[1], m[2], v)
		}
	}
	// _process_image_meta: image traits go to the unnumbered group.
	for _, k := range slices.Sorted(mapKeys(image)) {
		if t, ok := strings.CutPrefix(k, "trait:"); ok && image[k] == "required" {
			b.addTrait("", t, "required")
		}
	}
	b.translatePinning(f, image)
	// The flavor's sizes, unless an extra spec (of any group) named the
	// class; VCPU also gives way to PCPU.
	merged := b.merged()
	_, vcpu := merged["VCPU"]
	_, pcpu := merged["PCPU"]
	if !vcpu && !pcpu {
		b.set("", "VCPU", int64(f.VCPUs))
	}
	if _, ok := merged["MEMORY_MB"]; !ok {
		b.set("", "MEMORY_MB", int64(f.RAMMB))
	}
	if _, ok := merged["DISK_GB"]; !ok {
		// compute_utils.convert_mb_to_ceil_gb: swap MiB rounded up to GiB.
		disk := int64(f.EphemeralGB) + (int64(f.SwapMB)+1023)/1024
		if !isBFV {
			disk += int64(f.DiskGB)
		}
		if disk != 0 {
			b.set("", "DISK_GB", disk)
		}
	}
	rr.Groups = b.groups()
	return rr
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// requestBuilder holds the groups as nova's _rg_by_id does.
type requestBuilder struct {
	order     []string // suffixes in the order first named
	amounts   map[string]map[string]int64
	classes   map[string][]string // per suffix, classes in the order first named
	required  map[string][]string
	forbidden map[string][]string
}

func newRequestBuilder() *requestBuilder {
	return &requestBuilder{amounts: map[string]map[string]int64{}, classes: map[string][]string{},
		required: map[string][]string{}, forbidden: map[string][]string{}}
}

func (b *requestBuilder) group(s string) {
	if _, ok := b.amounts[s]; !ok {
		b.amounts[s] = map[string]int64{}
		b.order = append(b.order, s)
	}
}

func (b *requestBuilder) set(s, rc string, n int64) {
	b.group(s)
	if _, ok := b.amounts[s][rc]; !ok {
		b.classes[s] = append(b.classes[s], rc)
	}
	b.amounts[s][rc] = n
}

// addResource is RequestGroup.add_resource: a standard or CUSTOM_ class
// and a non-negative integer, else a warning and nothing.
func (b *requestBuilder) addResource(s, rc, v string) string {
	b.group(s) // get_request_group creates the group before the checks
	if !strings.HasPrefix(rc, "CUSTOM_") && !slices.Contains(placement.StandardResourceClasses, rc) {
		return fmt.Sprintf("%s is not a standard or CUSTOM_ resource class: nova ignores it", rc)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return fmt.Sprintf("%q is not an amount (an integer, 0 or more): nova ignores it", v)
	}
	b.set(s, rc, n)
	return ""
}

// addTrait is RequestGroup.add_trait: required or forbidden, anything
// else ignored (the group exists all the same).
func (b *requestBuilder) addTrait(s, t, v string) {
	b.group(s)
	switch v {
	case "required":
		if !slices.Contains(b.required[s], t) {
			b.required[s] = append(b.required[s], t)
		}
	case "forbidden":
		if !slices.Contains(b.forbidden[s], t) {
			b.forbidden[s] = append(b.forbidden[s], t)
		}
	}
}

// translatePinning is _translate_pinning_policies: a dedicated CPU policy
// (flavor hw:cpu_policy, else image hw_cpu_policy) asks PCPU = the flavor's
// vcpus (+1 with hw:emulator_threads_policy=isolate); the thread policy
// isolate forbids and require requires HW_CPU_HYPERTHREADING. The mixed
// policy's dedicated mask is not modelled (it asks VCPU as shared).
func (b *requestBuilder) translatePinning(f *models.Flavor, image map[string]string) {
	policy := f.ExtraSpecs["hw:cpu_policy"]
	if policy == "" {
		policy = image[imageCPUPolicy]
	}
	thread := f.ExtraSpecs["hw:cpu_thread_policy"]
	if thread == "" {
		thread = image[imageCPUThreadPolicy]
	}
	if policy == "dedicated" {
		pcpus := int64(f.VCPUs)
		if f.ExtraSpecs["hw:emulator_threads_policy"] == "isolate" {
			pcpus++
		}
		b.set("", "PCPU", pcpus)
	}
	switch thread {
	case "isolate":
		b.addTrait("", "HW_CPU_HYPERTHREADING", "forbidden")
	case "require":
		b.addTrait("", "HW_CPU_HYPERTHREADING", "required")
	}
}

// merged is merged_resources: the classes named in any group.
func (b *requestBuilder) merged() map[string]int64 {
	out := map[string]int64{}
	for _, g := range b.amounts {
		for rc, n := range g {
			out[rc] += n
		}
	}
	return out
}

// groups is strip_zeros, then the groups in corral's order (unnumbered
// first, suffixes sorted). The unnumbered group is always there (the
// request filters' member_of terms go to it); a numbered group left
// without resources is dropped, as corral always did.
func (b *requestBuilder) groups() []placement.Group {
	suffixes := slices.Clone(b.order)
	sort.Strings(suffixes)
	var out []placement.Group
	for _, s := range suffixes {
		g := placement.Group{Suffix: s}
		for _, rc := range slices.Sorted(slices.Values(b.classes[s])) {
			if n := b.amounts[s][rc]; n > 0 {
				g.Resources = append(g.Resources, placement.Amount{Class: rc, Amount: n})
			}
		}
		for _, t := range slices.Sorted(slices.Values(b.required[s])) {
			g.Required = append(g.Required, []string{t})
		}
		g.Forbidden = slices.Sorted(slices.Values(b.forbidden[s]))
		if len(g.Resources) == 0 && s != "" {
			continue
		}
		out = append(out, g)
	}
	return out
}

// QueryString is ResourceRequest.to_querystring with the member_of terms
// the request filters add: the exact GET /allocation_candidates query
// Nova sends, parameters sorted by key then value and URL-encoded as
// Python's urlencode does.
func (rr ResourceRequest) QueryString(limit int, unnumbered []string, numbered map[string][]string) string {
	type kv struct{ k, v string }
	var params []kv
	if limit > 0 {
		params = append(params, kv{"limit", strconv.Itoa(limit)})
	}
	if rr.GroupPolicy != "" {
		params = append(params, kv{"group_policy", rr.GroupPolicy})
	}
	if len(rr.RootForbidden) > 0 {
		var vals []string
		for _, t := range slices.Sorted(slices.Values(rr.RootForbidden)) {
			vals = append(vals, "!"+t)
		}
		params = append(params, kv{"root_required", strings.Join(vals, ",")})
	}
	seen := map[string]bool{}
	for _, g := range rr.Groups {
		if g.Suffix == "" && len(g.Resources) == 0 && len(g.Required) == 0 && len(g.Forbidden) == 0 && len(unnumbered) == 0 {
			continue // strip_zeros dropped it
		}
		seen[g.Suffix] = true
		params = append(params, kv{"resources" + g.Suffix, resourcesText(g)})
		var req []string
		for _, any := range g.Required {
			req = append(req, any...)
		}
		for _, t := range g.Forbidden {
			req = append(req, "!"+t)
		}
		if len(req) > 0 {
			params = append(params, kv{"required" + g.Suffix, strings.Join(req, ",")})
		}
	}
	for _, v := range unnumbered {
		params = append(params, kv{"member_of", v})
	}
	for s, vs := range numbered {
		if !seen[s] {
			continue // Nova sends no group without resources
		}
		for _, v := range vs {
			params = append(params, kv{"member_of" + s, v})
		}
	}
	sort.Slice(params, func(i, j int) bool {
		if params[i].k != params[j].k {
			return params[i].k < params[j].k
		}
		return params[i].v < params[j].v
	})
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = url.QueryEscape(p.k) + "=" + url.QueryEscape(p.v)
	}
	return strings.Join(parts, "&")
}
