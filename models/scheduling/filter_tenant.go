package scheduling

import (
	"slices"
	"strconv"
	"strings"

	"corral/models"
)

// TenantKeyPrefix starts every tenant-isolation metadata key. Nova matches
// by prefix, so filter_tenant_id, filter_tenant_id2, filter_tenant_id_gr1
// and even filter_tenant_ids all count.
const TenantKeyPrefix = "filter_tenant_id"

// IsTenantKey reports whether an aggregate metadata key restricts tenants.
func IsTenantKey(key string) bool { return strings.HasPrefix(key, TenantKeyPrefix) }

// AggregateMultiTenancyIsolation is nova's post-filter: a host whose
// aggregates carry tenant keys accepts only the projects named there (the
// union over all its aggregates, comma lists split). It keeps other projects
// out; it does not keep a project in (hosts without tenant keys accept all).
// Suffixed keys count since nova 30 (2024.2 Dalmatian, commit 3cd26b0a);
// before it (the nova_release setting says which) the filter reads the
// exact filter_tenant_id key alone
// (nova/scheduler/filters/aggregate_multitenancy_isolation.py host_passes at
// 26.0.0 … 29.x: metadata.get("filter_tenant_id")).
type AggregateMultiTenancyIsolation struct{}

// Name implements HostFilter.
func (AggregateMultiTenancyIsolation) Name() string { return models.FilterAggregateMultiTenancy }

// Filter implements HostFilter.
func (AggregateMultiTenancyIsolation) Filter(h *HostState, r *Request) Verdict {
	project := ""
	if r != nil {
		project = r.ProjectID
	}
	if r != nil && !models.NovaReleaseAtLeast(r.Settings.NovaRelease, models.NovaDalmatian) {
		return exactTenantKeyVerdict(h, r)
	}
	if h != nil && h.tenants != nil {
		return h.tenants.verdict(project, r.refusalTexts())
	}
	restricted, allowed := false, false
	if h != nil {
		for _, a := range h.Aggregates {
			if a == nil {
				continue
			}
			for k, v := range a.Metadata {
				if !IsTenantKey(k) {
					continue
				}
				restricted = true
				eachPiece(v, func(t string) bool {
					allowed = allowed || t == project
					return !allowed
				})
			}
		}
	}
	switch {
	case !restricted:
		return Verdict{Passed: true, Reason: "no aggregate of the host restricts tenants"}
	case allowed:
		return Verdict{Passed: true, Reason: "the project is among the host's tenants"}
	}
	return tenantRefusal(r.refusalTexts(), hfFormatValues(TenantsOf(h)))
}

// tenantTexts are the parts of a tenant refusal that depend on the project
// only: a run works them out once instead of once per host it refuses.
type tenantTexts struct {
	project string
	reason  string // the reason up to the host's tenants
	summary string
}

func newTenantTexts(project string) *tenantTexts {
	if project == "" {
		return &tenantTexts{
			reason:  "the request names no project, and the host admits only the tenants ",
			summary: "the request names no project, and the host admits only its tenants (filter_tenant_id keys)",
		}
	}
	q := strconv.Quote(project)
	return &tenantTexts{
		project: project,
		reason:  "project " + q + " is not among the host's tenants ",
		summary: "project " + q + " is not among the host's tenants (filter_tenant_id keys)",
	}
}

// refusalTexts returns the request's tenant texts (worked out here when
// the request did not come through a run).
func (r *Request) refusalTexts() *tenantTexts {
	project := ""
	if r != nil {
		project = r.ProjectID
		if r.tenantTexts != nil && r.tenantTexts.project == project {
			return r.tenantTexts
		}
	}
	return newTenantTexts(project)
}

// tenantRefusal names the host's tenants in the reason; the summary leaves
// them out, so every host the project may not use counts as one reason.
func tenantRefusal(t *tenantTexts, tenants string) Verdict {
	return Verdict{Reason: t.reason + tenants + " (filter_tenant_id keys)", Summary: t.summary}
}

// hostTenants is TenantsOf of a host, with the set as reasons print it.
type hostTenants struct {
	list []string
	text string
}

func newHostTenants(h *HostState) *hostTenants {
	list := TenantsOf(h)
	return &hostTenants{list: list, text: hfFormatValues(list)}
}

// verdict is the filter's verdict for a host with these tenants. Every
// tenant key yields at least one piece, so an empty list means no key.
func (t *hostTenants) verdict(project string, texts *tenantTexts) Verdict {
	switch {
	case len(t.list) == 0:
		return Verdict{Passed: true, Reason: "no aggregate of the host restricts tenants"}
	case slices.Contains(t.list, project):
		return Verdict{Passed: true, Reason: "the project is among the host's tenants"}
	}
	return tenantRefusal(texts, t.text)
}

// TenantsOf lists the projects h's aggregates admit (sorted); none means
// the host is not restricted.
func TenantsOf(h *HostState) []string {
	var ts []string
	if h == nil {
		return nil
	}
	for _, a := range h.Aggregates {
		if a == nil {
			continue
		}
		for k, v := range a.Metadata {
			if IsTenantKey(k) {
				eachPiece(v, func(t string) bool {
					ts = append(ts, t)
					return true
				})
			}
		}
	}
	return hfSortedUnique(ts)
}

// exactTenantKeyVerdict is the filter before nova 30: only the exact key
// filter_tenant_id restricts, its values (comma lists split and stripped,
// united over the host's aggregates) naming the projects admitted; a
// suffixed key (filter_tenant_id_2) restricts nothing. Hosts alike in
// every tenant key are alike here too, so the run's views still hold.
func exactTenantKeyVerdict(h *HostState, r *Request) Verdict {
	var ts []string
	suffixed := false
	if h != nil {
		for _, a := range h.Aggregates {
			if a == nil {
				continue
			}
			for k, v := range a.Metadata {
				switch {
				case k == TenantKeyPrefix:
					eachPiece(v, func(t string) bool {
						ts = append(ts, t)
						return true
					})
				case IsTenantKey(k):
					suffixed = true
				}
			}
		}
	}
	switch {
	case len(ts) == 0 && suffixed:
		return Verdict{Passed: true, Reason: "only suffixed filter_tenant_id… keys, which this Nova release does not read (it reads filter_tenant_id alone; nova 30 and later read every such key)"}
	case len(ts) == 0:
		return Verdict{Passed: true, Reason: "no aggregate of the host restricts tenants"}
	case slices.Contains(ts, r.ProjectID):
		return Verdict{Passed: true, Reason: "the project is among the host's tenants"}
	}
	t := r.refusalTexts()
	return Verdict{Reason: t.reason + hfFormatValues(hfSortedUnique(ts)) + " (filter_tenant_id key)", Summary: t.summary}
}

// exactTenantKey is what h's aggregates say under the exact key
// filter_tenant_id, their values sorted and joined ("" when none has it),
// prefixed so that a present but empty value is told from an absent one.
func exactTenantKey(h *HostState) string {
	var vs []string
	found := false
	for _, a := range h.Aggregates {
		if a == nil {
			continue
		}
		if v, ok := a.Metadata[TenantKeyPrefix]; ok {
			found = true
			vs = append(vs, v)
		}
	}
	if !found {
		return ""
	}
	slices.Sort(vs)
	return "e" + strings.Join(vs, "\x00")
}
