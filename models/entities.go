package models

import (
	"slices"
	"time"
)

// The entities below are plain structs. Their gorm tags describe the columns
// models/store reads and writes (its SQL migrations create the tables);
// nothing here imports gorm.

// Inventory is one resource class's capacity on a provider (Placement's shape).
type Inventory struct {
	Total           int64   `json:"total"`
	Reserved        int64   `json:"reserved"`
	MinUnit         int64   `json:"min_unit,omitempty"`
	MaxUnit         int64   `json:"max_unit,omitempty"`
	StepSize        int64   `json:"step_size,omitempty"`
	AllocationRatio float64 `json:"allocation_ratio"`
}

// TraitSharesViaAggregate marks a sharing provider (e.g. shared storage).
const TraitSharesViaAggregate = "MISC_SHARES_VIA_AGGREGATE"

// Provider is a resource provider. A root (no parent) that is not a sharing
// provider is a host; its name is the host name.
type Provider struct {
	UUID        string               `gorm:"primaryKey;size:36" json:"uuid"`
	Name        string               `gorm:"uniqueIndex;size:200;not null" json:"name"`
	ParentUUID  *string              `gorm:"size:36;index" json:"parent_provider_uuid"`
	RootUUID    string               `gorm:"size:36;index" json:"root_provider_uuid"`
	Traits      []string             `gorm:"serializer:json" json:"traits"`
	Inventories map[string]Inventory `gorm:"serializer:json" json:"inventories,omitempty"`
	Usages      map[string]int64     `gorm:"serializer:json" json:"usages,omitempty"`
	// Compute is the host's nova-compute service and hypervisor, when known.
	Compute    *ComputeHost `gorm:"serializer:json" json:"compute,omitempty"`
	Generation int64        `gorm:"not null;default:0" json:"generation"`
	CreatedAt  time.Time    `json:"created_at"`
	UpdatedAt  time.Time    `json:"updated_at"`
}

// ComputeHost is a host as Nova's compute side reports it: its nova-compute
// service (os-services), which ComputeFilter reads, and its compute node's
// hypervisor (os-hypervisors), which ComputeCapabilitiesFilter may read. A
// provider without one is a host corral knows from Placement alone (a
// world that does not say): it passes those filters where they would need
// it, and the reason says so.
type ComputeHost struct {
	Host           string `json:"host,omitempty"`   // the service's host (Nova's name for it)
	Status         string `json:"status,omitempty"` // ServiceEnabled (or empty) or ServiceDisabled
	DisabledReason string `json:"disabled_reason,omitempty"`
	// State is ServiceUp (or empty) or ServiceDown, as Nova's servicegroup
	// judged it when corral read it: down when forced down or not heard
	// from within the cloud's service_down_time.
	State      string `json:"state,omitempty"`
	ForcedDown bool   `json:"forced_down,omitempty"`
	// LastSeen is the last heartbeat (Nova's updated_at), kept only while
	// the service is down: an up service's moves every report_interval,
	// and would make every sync a change.
	LastSeen string `json:"last_seen,omitempty"`
	// The compute node's hypervisor_type ("QEMU"), hypervisor_version
	// (6002000) and host_ip, as Nova's HostState holds them.
	HypervisorType    string `json:"hypervisor_type,omitempty"`
	HypervisorVersion int64  `json:"hypervisor_version,omitempty"`
	HostIP            string `json:"host_ip,omitempty"`
}

// Values of ComputeHost's Status and State, as Nova's API spells them.
const (
	ServiceEnabled  = "enabled"
	ServiceDisabled = "disabled"
	ServiceUp       = "up"
	ServiceDown     = "down"
)

// ServiceKnown reports whether the host's service is known: a sync always
// reads its status and state.
func (s *ComputeHost) ServiceKnown() bool { return s != nil && (s.Status != "" || s.State != "") }

// Disabled reports whether the service is disabled.
func (s *ComputeHost) Disabled() bool { return s != nil && s.Status == ServiceDisabled }

// Down reports whether Nova holds the service down (forced down, or not
// heard from in time).
func (s *ComputeHost) Down() bool { return s != nil && (s.ForcedDown || s.State == ServiceDown) }

// Summary is the service's condition in a few words, as the sync report
// and the pages say it: "enabled, up", "disabled (maintenance), down since
// 2026-12-01T10:00:00, forced down".
func (s *ComputeHost) Summary() string {
	if s == nil {
		return "unknown"
	}
	out := ServiceEnabled
	if s.Disabled() {
		out = ServiceDisabled
		if s.DisabledReason != "" {
			out += " (" + s.DisabledReason + ")"
		}
	}
	if !s.Down() {
		return out + ", " + ServiceUp
	}
	out += ", " + ServiceDown
	if s.LastSeen != "" {
		out += " since " + s.LastSeen
	}
	if s.ForcedDown {
		out += ", forced down"
	}
	return out
}

// HasTrait reports whether p carries trait t.
func (p *Provider) HasTrait(t string) bool {
	for _, x := range p.Traits {
		if x == t {
			return true
		}
	}
	return false
}

// IsSharing reports whether p shares its resources via aggregates.
func (p *Provider) IsSharing() bool { return p.HasTrait(TraitSharesViaAggregate) }

// IsHost reports whether p is a compute host: a root that is not sharing.
func (p *Provider) IsHost() bool { return p.ParentUUID == nil && !p.IsSharing() }

// Consumer is Placement's consumer: whatever holds allocations (an
// instance, a migration). Generation guards concurrent allocation writes
// (Placement 1.28); ConsumerType is "INSTANCE", "MIGRATION" or empty for
// Placement's "unknown" (1.38).
type Consumer struct {
	UUID         string       `gorm:"primaryKey;size:36" json:"uuid"`
	ProjectID    string       `gorm:"size:255;not null;index" json:"project_id"`
	UserID       string       `gorm:"size:255;not null" json:"user_id"`
	ConsumerType string       `gorm:"size:255" json:"consumer_type,omitempty"`
	Generation   int64        `gorm:"not null;default:0" json:"generation"`
	Allocations  []Allocation `gorm:"-" json:"allocations"`
}

// Allocation is one consumer's use of one resource class on one provider.
// A provider's usage of a class is the sum of its allocations.
type Allocation struct {
	ConsumerUUID  string `gorm:"primaryKey;size:36" json:"consumer_uuid"`
	ProviderUUID  string `gorm:"primaryKey;size:36;index" json:"resource_provider"`
	ResourceClass string `gorm:"primaryKey;size:255" json:"resource_class"`
	Used          int64  `gorm:"not null" json:"used"`
}

// Aggregate is Nova's host aggregate and Placement's aggregate in one.
// ID is Nova's integer id; UUID is what Placement and member_of speak.
type Aggregate struct {
	ID               int64             `gorm:"primaryKey;autoIncrement" json:"id"`
	UUID             string            `gorm:"uniqueIndex;size:36;not null" json:"uuid"`
	Name             string            `gorm:"uniqueIndex;size:255;not null" json:"name"`
	AvailabilityZone *string           `gorm:"size:255" json:"availability_zone"`
	Metadata         map[string]string `gorm:"serializer:json" json:"metadata"`
	// Members are provider UUIDs; the store keeps them in aggregate_members.
	// They are both memberships at once: Nova's aggregate hosts (which host
	// filters and zones read) and Placement's resource provider aggregates
	// (which member_of reads). Nova mirrors the first into the second, but
	// the two drift apart in real clouds (what `nova-manage placement
	// sync_aggregates` repairs); a synced aggregate names the members only
	// one side has, and everything else is in both.
	Members []string `gorm:"-" json:"members"`
	// NotInPlacement are members Nova has (hosts' root providers) that
	// Placement's aggregate lacks: member_of does not see them there.
	NotInPlacement []string `gorm:"serializer:json" json:"not_in_placement,omitempty"`
	// NotInNova are hosts' root providers in Placement's aggregate whose
	// host Nova's aggregate lacks: Nova's filters and zones do not see them.
	NotInNova  []string  `gorm:"serializer:json" json:"not_in_nova,omitempty"`
	Generation int64     `gorm:"not null;default:0" json:"generation"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// AggregateMember is one provider's membership in one aggregate.
type AggregateMember struct {
	AggregateUUID string `gorm:"primaryKey;size:36"`
	ProviderUUID  string `gorm:"primaryKey;size:36;index"`
}

// Flavor is a Nova flavor; ID is the flavorid.
type Flavor struct {
	ID     string `gorm:"primaryKey;size:255" json:"id"`
	Name   string `gorm:"uniqueIndex;size:255;not null" json:"name"`
	VCPUs  int    `json:"vcpus"`
	RAMMB  int    `json:"ram_mb"`
	DiskGB int    `json:"disk_gb"`
	// EphemeralGB and SwapMB are the flavor's ephemeral disk and swap:
	// Nova asks Placement for them as DISK_GB beside the root disk.
	EphemeralGB int               `gorm:"not null;default:0" json:"ephemeral_gb,omitempty"`
	SwapMB      int               `gorm:"not null;default:0" json:"swap_mb,omitempty"`
	ExtraSpecs  map[string]string `gorm:"serializer:json" json:"extra_specs"`
	// Private flavors are usable only by the projects in Projects (Nova's
	// os-flavor-access); public ones by every project.
	Private    bool      `gorm:"not null;default:false" json:"private,omitempty"`
	Projects   []string  `gorm:"serializer:json" json:"projects,omitempty"`
	Generation int64     `gorm:"not null;default:0" json:"generation"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// UsableBy says whether project may boot this flavor, as Nova decides it
// for a project that is not admin: public flavors, and private ones whose
// access list names the project.
func (f *Flavor) UsableBy(project string) bool {
	return !f.Private || slices.Contains(f.Projects, project)
}

// Server is an instance: just enough to hold group members and count per host.
type Server struct {
	UUID      string    `gorm:"primaryKey;size:36" json:"uuid"`
	Name      string    `gorm:"size:255" json:"name"`
	ProjectID string    `gorm:"size:255;index" json:"project_id"`
	UserID    string    `gorm:"size:255" json:"user_id"`
	Host      string    `gorm:"size:255;index" json:"host"` // the host provider's name
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Server group policies.
const (
	PolicyAffinity         = "affinity"
	PolicyAntiAffinity     = "anti-affinity"
	PolicySoftAffinity     = "soft-affinity"
	PolicySoftAntiAffinity = "soft-anti-affinity"
)

// RuleMaxServerPerHost is the only server-group rule (anti-affinity only).
const RuleMaxServerPerHost = "max_server_per_host"

// ServerGroup is a Nova server group. Members are server UUIDs.
type ServerGroup struct {
	UUID       string         `gorm:"primaryKey;size:36" json:"uuid"`
	Name       string         `gorm:"size:255" json:"name"`
	ProjectID  string         `gorm:"size:255;index" json:"project_id"`
	UserID     string         `gorm:"size:255" json:"user_id"`
	Policy     string         `gorm:"size:32;not null" json:"policy"`
	Rules      map[string]int `gorm:"serializer:json" json:"rules"`
	Members    []string       `gorm:"serializer:json" json:"members"`
	Generation int64          `gorm:"not null;default:0" json:"generation"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at"`
}

// MaxServerPerHost returns the anti-affinity limit: the rule, or 1 by default.
func (g *ServerGroup) MaxServerPerHost() int {
	if n, ok := g.Rules[RuleMaxServerPerHost]; ok && n > 0 {
		return n
	}
	return 1
}

// Role is what a user may do, in the console and through API tokens alike.
// Roles nest as Keystone's default roles do: an admin may do everything a
// member may, and a member everything a reader may.
type Role string

// Roles, from most to least privileged.
const (
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
	RoleReader Role = "reader"
)

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r is at least as privileged as min. An unknown
// role is at least nothing, so that a corrupted row never grants access.
func (r Role) AtLeast(min Role) bool {
	n := r.rank()
	return n > 0 && n >= min.rank()
}

// rank orders the roles: admin > member > reader; unknown roles rank 0.
func (r Role) rank() int {
	switch r {
	case RoleAdmin:
		return 3
	case RoleMember:
		return 2
	case RoleReader:
		return 1
	}
	return 0
}

// User signs in to the console and owns API tokens.
type User struct {
	ID           int64     `gorm:"primaryKey;autoIncrement" json:"id"`
	Name         string    `gorm:"uniqueIndex;size:255;not null" json:"name"`
	PasswordHash string    `gorm:"size:255;not null" json:"-"`
	Role         Role      `gorm:"size:16;not null" json:"role"`
	ProjectID    string    `gorm:"size:255" json:"project_id"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// APIToken is stored hashed; the plain token is shown once when created.
type APIToken struct {
	ID         int64      `gorm:"primaryKey;autoIncrement" json:"id"`
	UserID     int64      `gorm:"index;not null" json:"user_id"`
	Name       string     `gorm:"size:255" json:"name"`
	Hash       string     `gorm:"uniqueIndex;size:64;not null" json:"-"`
	Prefix     string     `gorm:"size:16" json:"prefix"` // first characters, to recognise it
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// AuditEvent records one change: who, when, what, before → after (JSON).
type AuditEvent struct {
	ID         int64     `gorm:"primaryKey;autoIncrement" json:"id"`
	At         time.Time `gorm:"index;not null" json:"at"`
	Actor      string    `gorm:"size:255;index" json:"actor"`
	Via        string    `gorm:"size:32" json:"via"` // console, compute-api, placement-api, cli
	Action     string    `gorm:"size:64" json:"action"`
	ObjectType string    `gorm:"size:64;index" json:"object_type"`
	ObjectID   string    `gorm:"size:255;index" json:"object_id"`
	ObjectName string    `gorm:"size:255" json:"object_name"`
	Before     string    `gorm:"type:text" json:"before"`
	After      string    `gorm:"type:text" json:"after"`
}

// Quota limits a project's server groups and group members (Nova's names).
type Quota struct {
	ProjectID string `gorm:"primaryKey;size:255" json:"project_id"`
	Resource  string `gorm:"primaryKey;size:64" json:"resource"`
	Limit     int    `json:"limit"`
}

// Quota resources and Nova's defaults.
const (
	QuotaServerGroups       = "server_groups"
	QuotaServerGroupMembers = "server_group_members"
	DefaultQuota            = 10
)

// ResourceClass is a custom resource class (CUSTOM_*) created through the
// Placement API; the standard classes are built in.
type ResourceClass struct {
	Name      string    `gorm:"primaryKey;size:255" json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Trait is a custom trait (CUSTOM_*) created through the Placement API;
// the standard traits are built in.
type Trait struct {
	Name      string    `gorm:"primaryKey;size:255" json:"name"`
	CreatedAt time.Time `json:"created_at"`
}
