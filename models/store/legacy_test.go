package store_test

import (
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The schema as release 7989f67 made it: GORM's AutoMigrate over these
// structs (copies of that release's models and store types, frozen here so
// later changes to the models cannot move the baseline), then the hand-made
// memberships table and the provider indexes. The upgrade tests build an
// old database with it on PostgreSQL; on SQLite they also have a file the
// release itself wrote (testdata/corral-7989f67.db).

type legacyInventory struct {
	Total, Reserved, MinUnit, MaxUnit, StepSize int64
	AllocationRatio                             float64
}

type legacyProvider struct {
	UUID        string                     `gorm:"primaryKey;size:36"`
	Name        string                     `gorm:"uniqueIndex;size:200;not null"`
	ParentUUID  *string                    `gorm:"size:36;index"`
	RootUUID    string                     `gorm:"size:36;index"`
	Traits      []string                   `gorm:"serializer:json"`
	Inventories map[string]legacyInventory `gorm:"serializer:json"`
	Usages      map[string]int64           `gorm:"serializer:json"`
	Generation  int64                      `gorm:"not null;default:0"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func (legacyProvider) TableName() string { return "providers" }

type legacyAggregate struct {
	ID               int64             `gorm:"primaryKey;autoIncrement"`
	UUID             string            `gorm:"uniqueIndex;size:36;not null"`
	Name             string            `gorm:"uniqueIndex;size:255;not null"`
	AvailabilityZone *string           `gorm:"size:255"`
	Metadata         map[string]string `gorm:"serializer:json"`
	Members          []string          `gorm:"-"`
	Generation       int64             `gorm:"not null;default:0"`
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

func (legacyAggregate) TableName() string { return "aggregates" }

type legacyFlavor struct {
	ID         string            `gorm:"primaryKey;size:255"`
	Name       string            `gorm:"uniqueIndex;size:255;not null"`
	VCPUs      int               ``
	RAMMB      int               ``
	DiskGB     int               ``
	ExtraSpecs map[string]string `gorm:"serializer:json"`
	Generation int64             `gorm:"not null;default:0"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (legacyFlavor) TableName() string { return "flavors" }

type legacyServer struct {
	UUID      string `gorm:"primaryKey;size:36"`
	Name      string `gorm:"size:255"`
	ProjectID string `gorm:"size:255;index"`
	UserID    string `gorm:"size:255"`
	Host      string `gorm:"size:255;index"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (legacyServer) TableName() string { return "servers" }

type legacyServerGroup struct {
	UUID       string         `gorm:"primaryKey;size:36"`
	Name       string         `gorm:"size:255"`
	ProjectID  string         `gorm:"size:255;index"`
	UserID     string         `gorm:"size:255"`
	Policy     string         `gorm:"size:32;not null"`
	Rules      map[string]int `gorm:"serializer:json"`
	Members    []string       `gorm:"serializer:json"`
	Generation int64          `gorm:"not null;default:0"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (legacyServerGroup) TableName() string { return "server_groups" }

type legacyUser struct {
	ID           int64  `gorm:"primaryKey;autoIncrement"`
	Name         string `gorm:"uniqueIndex;size:255;not null"`
	PasswordHash string `gorm:"size:255;not null"`
	Role         string `gorm:"size:16;not null"`
	ProjectID    string `gorm:"size:255"`
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (legacyUser) TableName() string { return "users" }

type legacyAPIToken struct {
	ID         int64  `gorm:"primaryKey;autoIncrement"`
	UserID     int64  `gorm:"index;not null"`
	Name       string `gorm:"size:255"`
	Hash       string `gorm:"uniqueIndex;size:64;not null"`
	Prefix     string `gorm:"size:16"`
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

func (legacyAPIToken) TableName() string { return "api_tokens" }

type legacyAuditEvent struct {
	ID         int64     `gorm:"primaryKey;autoIncrement"`
	At         time.Time `gorm:"index;not null"`
	Actor      string    `gorm:"size:255;index"`
	Via        string    `gorm:"size:32"`
	Action     string    `gorm:"size:64"`
	ObjectType string    `gorm:"size:64;index"`
	ObjectID   string    `gorm:"size:255;index"`
	ObjectName string    `gorm:"size:255"`
	Before     string    `gorm:"type:text"`
	After      string    `gorm:"type:text"`
}

func (legacyAuditEvent) TableName() string { return "audit_events" }

type legacyQuota struct {
	ProjectID string `gorm:"primaryKey;size:255"`
	Resource  string `gorm:"primaryKey;size:64"`
	Limit     int
}

func (legacyQuota) TableName() string { return "quota" }

type legacyRevisionRow struct {
	ID       int   `gorm:"primaryKey;autoIncrement:false"`
	Revision int64 `gorm:"not null;default:0"`
}

func (legacyRevisionRow) TableName() string { return "corral_revision" }

type legacySettingsRow struct {
	ID         int    `gorm:"primaryKey;autoIncrement:false"`
	Data       string `gorm:"type:text;not null"`
	Generation int64  `gorm:"not null;default:0"`
	UpdatedAt  time.Time
}

func (legacySettingsRow) TableName() string { return "corral_settings" }

type legacySessionKeyRow struct {
	ID        int64  `gorm:"primaryKey;autoIncrement:false"`
	HashKey   []byte `gorm:"not null"`
	BlockKey  []byte `gorm:"not null"`
	CreatedAt time.Time
}

func (legacySessionKeyRow) TableName() string { return "corral_session_keys" }

type legacyDraft struct {
	ID           string           `gorm:"primaryKey;size:36"`
	Name         string           `gorm:"size:255;not null"`
	Author       string           `gorm:"size:255;not null"`
	BaseRevision int64            `gorm:"not null;default:0"`
	Changes      string           `gorm:"type:text;not null"`
	Generations  map[string]int64 `gorm:"serializer:json;type:text"`
	Version      int64            `gorm:"not null;default:0"`
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (legacyDraft) TableName() string { return "corral_drafts" }

type legacySession struct {
	ID         int64     `gorm:"primaryKey;autoIncrement"`
	Hash       string    `gorm:"uniqueIndex;size:64;not null"`
	UserID     int64     `gorm:"index;not null"`
	CreatedAt  time.Time `gorm:"not null"`
	LastSeenAt time.Time `gorm:"not null"`
	ExpiresAt  time.Time `gorm:"index;not null"`
	UserAgent  string    `gorm:"size:512"`
	IP         string    `gorm:"size:64"`
}

func (legacySession) TableName() string { return "sessions" }

// legacyMigrate is release 7989f67's store.migrateTx (less the advisory
// lock: tests build each old database alone).
func legacyMigrate(tx *gorm.DB, postgres bool) error {
	if err := tx.AutoMigrate(
		&legacyProvider{}, &legacyAggregate{}, &legacyFlavor{}, &legacyServer{},
		&legacyServerGroup{}, &legacyUser{}, &legacyAPIToken{}, &legacyAuditEvent{},
		&legacyQuota{}, &legacyRevisionRow{}, &legacySettingsRow{}, &legacySessionKeyRow{},
		&legacyDraft{}, &legacySession{},
	); err != nil {
		return err
	}
	stmts := []string{`CREATE TABLE IF NOT EXISTS aggregate_members (
	aggregate_uuid varchar(36) NOT NULL REFERENCES aggregates(uuid) ON DELETE CASCADE,
	provider_uuid varchar(36) NOT NULL REFERENCES providers(uuid) ON DELETE CASCADE,
	PRIMARY KEY (aggregate_uuid, provider_uuid)
)`,
		"CREATE INDEX IF NOT EXISTS idx_aggregate_members_provider ON aggregate_members (provider_uuid)",
	}
	sharing := `(instr(COALESCE(traits, ''), '"MISC_SHARES_VIA_AGGREGATE"') > 0)`
	if postgres {
		sharing = `(strpos(COALESCE(traits, ''), '"MISC_SHARES_VIA_AGGREGATE"') > 0)`
	}
	stmts = append(stmts,
		"CREATE INDEX IF NOT EXISTS idx_providers_parent_name ON providers (parent_uuid, name)",
		"CREATE INDEX IF NOT EXISTS idx_providers_sharing ON providers (name) WHERE "+sharing,
		"CREATE INDEX IF NOT EXISTS idx_providers_hosts ON providers (name) WHERE parent_uuid IS NULL AND NOT "+sharing,
		"CREATE INDEX IF NOT EXISTS idx_providers_children ON providers (name) WHERE parent_uuid IS NOT NULL AND NOT "+sharing,
	)
	for _, st := range stmts {
		if err := tx.Exec(st).Error; err != nil {
			return err
		}
	}
	return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&legacyRevisionRow{ID: 1}).Error
}
