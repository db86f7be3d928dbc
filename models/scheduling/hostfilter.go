package scheduling

import "corral/models"

// HostState is what a host filter or weigher sees of one host.
type HostState struct {
	Provider *models.Provider // the host's root provider
	// Aggregates are the aggregates that contain the host's root provider.
	Aggregates []*models.Aggregate

	// numInstances is the number of servers on the host.
	numInstances int

	// tenants, set on a snapshot's hosts, is what tenant isolation reads
	// of Aggregates, worked out once per distinct situation. A host with
	// other aggregates must be built anew, not copied and changed.
	tenants *hostTenants
}

// Name is the host name (the root provider's name).
func (h *HostState) Name() string { return h.Provider.Name }

// Request is one scheduling request as the host filters and weighers see it.
type Request struct {
	ProjectID        string
	UserID           string
	Flavor           *models.Flavor // never nil: an ad-hoc flavor has no name
	AvailabilityZone string
	Group            *models.ServerGroup // nil when the request names no group
	NumInstances     int
	// GroupHosts counts, per host name, the group's live members on that
	// host; empty when Group is nil.
	GroupHosts map[string]int
	Settings   models.Settings
	// Image is the booted image's properties (nil: none given); IsBFV a
	// boot from volume.
	Image map[string]string
	IsBFV bool
	// SameHost and DifferentHost map each host to the servers of that
	// scheduler hint it runs; nil when the hint is not given.
	SameHost, DifferentHost map[string][]string
	// consumedOn is what a multi-create's earlier instances took, per
	// host name (weigher_resources.go); a run owns it.
	consumedOn map[string]hostUse

	// tenantTexts is set by a run, which owns its Request, before any
	// filter sees it (filter_tenant.go).
	tenantTexts *tenantTexts
}

// Verdict is one filter's answer for one host. Reason says, for a person,
// why the host failed (or, optionally, why it passed).
type Verdict struct {
	Passed bool
	Reason string
	// Summary is Reason with the host's particulars taken out (its tenants,
	// its aggregates' values), so a trace's summary can count alike
	// exclusions as one; empty means Reason is already general.
	Summary string
}

// HostFilter is one of nova's host filters. Filter must never panic: input
// that would crash upstream fails the host with the reason spelled out.
type HostFilter interface {
	Name() string
	Filter(h *HostState, r *Request) Verdict
}

// Weigher scores a host; the pipeline normalises raw weights across hosts
// (nova's normalisation to [0,1]) and multiplies them by Multiplier.
type Weigher interface {
	Name() string
	Weigh(h *HostState, r *Request) float64
	Multiplier(s models.Settings) float64
}
