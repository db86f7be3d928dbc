package models

import "time"

// Actor is who makes a change and through which door; it is recorded in the
// audit log of every write.
type Actor struct {
	Name      string
	Via       string // console, compute-api, placement-api, cli, demo
	ProjectID string
	Role      Role
}

// Disagreement is a host whose aggregate membership Nova and Placement see
// differently: forbidden and required aggregates (member_of) act on
// Placement's copy only, so scheduling sees Placement's side. It is what
// `nova-manage placement sync_aggregates` repairs.
type Disagreement struct {
	Aggregate     string `json:"aggregate"` // name
	AggregateUUID string `json:"aggregate_uuid"`
	Host          string `json:"host"`
	Provider      string `json:"provider,omitempty"` // root provider uuid
	// InNova: the host is in Nova's aggregate but its provider is not in
	// Placement's; otherwise the reverse.
	InNova  bool   `json:"in_nova"`
	Message string `json:"message"`
}

// SyncRecord is one sync with a real cloud: when, how long, what it cost,
// what changed, and the error when it failed. Secrets never go in here:
// Connection describes the endpoints or the cloud's name only.
type SyncRecord struct {
	ID         int64     `gorm:"primaryKey;autoIncrement" json:"id"`
	StartedAt  time.Time `gorm:"index;not null" json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	DurationMS int64     `json:"duration_ms"`
	Connection string    `gorm:"size:1000" json:"connection"`
	Actor      string    `gorm:"size:255" json:"actor"`
	Requests   int64     `json:"requests"`
	// ProvidersRead are the providers whose details were read; the others
	// kept their last state (same Placement generation).
	ProvidersRead   int    `json:"providers_read"`
	ProvidersReused int    `json:"providers_reused"`
	Changes         string `gorm:"type:text" json:"changes"` // JSON list of changes
	ChangeCount     int    `json:"change_count"`             // objects changed
	// Disagreements are stored as a JSON list; a record that cannot be
	// read back is an error of the read, not an empty list.
	Disagreements []Disagreement `gorm:"type:text;serializer:json" json:"disagreements"`
	Warnings      string         `gorm:"type:text" json:"warnings"` // JSON list of lines
	Error         string         `gorm:"type:text" json:"error"`    // empty when the sync stored its state
	Revision      int64          `json:"revision"`                  // the revision the sync committed (0: none)
}

// TableName is the table the store keeps sync records in.
func (SyncRecord) TableName() string { return "cloud_syncs" }

// LiveState is what a sync read from the cloud, in corral's terms, for the
// store to make its live state.
type LiveState struct {
	World  *World
	Quotas []Quota // the limits of the projects the cloud reported
	// Consumers are Placement's consumers with their allocations; they
	// replace corral's.
	Consumers []Consumer
	// Placement is the services' own view kept for the next sync (JSON).
	Placement string
	Record    SyncRecord
}
