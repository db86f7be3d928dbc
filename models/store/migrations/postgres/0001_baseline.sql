-- The schema GORM's AutoMigrate created up to commit 7989f67, statement for
-- statement. Every statement is guarded with IF NOT EXISTS so that running
-- it on a database made by such a release (which has no corral_migrations
-- table) adopts that database as version 0001 and adds only what an older
-- release had not created yet (drafts, sessions, indexes).

CREATE TABLE IF NOT EXISTS providers (
	uuid varchar(36),
	name varchar(200) NOT NULL,
	parent_uuid varchar(36),
	root_uuid varchar(36),
	traits text,
	inventories text,
	usages text,
	generation bigint NOT NULL DEFAULT 0,
	created_at timestamptz,
	updated_at timestamptz,
	PRIMARY KEY (uuid)
);
CREATE INDEX IF NOT EXISTS idx_providers_root_uuid ON providers(root_uuid);
CREATE INDEX IF NOT EXISTS idx_providers_parent_uuid ON providers(parent_uuid);
CREATE UNIQUE INDEX IF NOT EXISTS idx_providers_name ON providers(name);

CREATE TABLE IF NOT EXISTS aggregates (
	id bigserial,
	uuid varchar(36) NOT NULL,
	name varchar(255) NOT NULL,
	availability_zone varchar(255),
	metadata text,
	generation bigint NOT NULL DEFAULT 0,
	created_at timestamptz,
	updated_at timestamptz,
	PRIMARY KEY (id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_aggregates_name ON aggregates(name);
CREATE UNIQUE INDEX IF NOT EXISTS idx_aggregates_uuid ON aggregates(uuid);

CREATE TABLE IF NOT EXISTS flavors (
	id varchar(255),
	name varchar(255) NOT NULL,
	v_cpus bigint,
	ram_mb bigint,
	disk_gb bigint,
	extra_specs text,
	generation bigint NOT NULL DEFAULT 0,
	created_at timestamptz,
	updated_at timestamptz,
	PRIMARY KEY (id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_flavors_name ON flavors(name);

CREATE TABLE IF NOT EXISTS servers (
	uuid varchar(36),
	name varchar(255),
	project_id varchar(255),
	user_id varchar(255),
	host varchar(255),
	created_at timestamptz,
	updated_at timestamptz,
	PRIMARY KEY (uuid)
);
CREATE INDEX IF NOT EXISTS idx_servers_host ON servers(host);
CREATE INDEX IF NOT EXISTS idx_servers_project_id ON servers(project_id);

CREATE TABLE IF NOT EXISTS server_groups (
	uuid varchar(36),
	name varchar(255),
	project_id varchar(255),
	user_id varchar(255),
	policy varchar(32) NOT NULL,
	rules text,
	members text,
	generation bigint NOT NULL DEFAULT 0,
	created_at timestamptz,
	updated_at timestamptz,
	PRIMARY KEY (uuid)
);
CREATE INDEX IF NOT EXISTS idx_server_groups_project_id ON server_groups(project_id);

CREATE TABLE IF NOT EXISTS users (
	id bigserial,
	name varchar(255) NOT NULL,
	password_hash varchar(255) NOT NULL,
	role varchar(16) NOT NULL,
	project_id varchar(255),
	created_at timestamptz,
	updated_at timestamptz,
	PRIMARY KEY (id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_users_name ON users(name);

CREATE TABLE IF NOT EXISTS api_tokens (
	id bigserial,
	user_id bigint NOT NULL,
	name varchar(255),
	hash varchar(64) NOT NULL,
	prefix varchar(16),
	created_at timestamptz,
	last_used_at timestamptz,
	revoked_at timestamptz,
	PRIMARY KEY (id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_api_tokens_hash ON api_tokens(hash);
CREATE INDEX IF NOT EXISTS idx_api_tokens_user_id ON api_tokens(user_id);

CREATE TABLE IF NOT EXISTS audit_events (
	id bigserial,
	at timestamptz NOT NULL,
	actor varchar(255),
	via varchar(32),
	action varchar(64),
	object_type varchar(64),
	object_id varchar(255),
	object_name varchar(255),
	before text,
	after text,
	PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_audit_events_object_id ON audit_events(object_id);
CREATE INDEX IF NOT EXISTS idx_audit_events_object_type ON audit_events(object_type);
CREATE INDEX IF NOT EXISTS idx_audit_events_actor ON audit_events(actor);
CREATE INDEX IF NOT EXISTS idx_audit_events_at ON audit_events(at);

CREATE TABLE IF NOT EXISTS quota (
	project_id varchar(255),
	resource varchar(64),
	"limit" bigint,
	PRIMARY KEY (project_id, resource)
);

CREATE TABLE IF NOT EXISTS corral_revision (
	id bigint,
	revision bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS corral_settings (
	id bigint,
	data text NOT NULL,
	generation bigint NOT NULL DEFAULT 0,
	updated_at timestamptz,
	PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS corral_session_keys (
	id bigint,
	hash_key bytea NOT NULL,
	block_key bytea NOT NULL,
	created_at timestamptz,
	PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS corral_drafts (
	id varchar(36),
	name varchar(255) NOT NULL,
	author varchar(255) NOT NULL,
	base_revision bigint NOT NULL DEFAULT 0,
	changes text NOT NULL,
	generations text,
	version bigint NOT NULL DEFAULT 0,
	created_at timestamptz,
	updated_at timestamptz,
	PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS sessions (
	id bigserial,
	hash varchar(64) NOT NULL,
	user_id bigint NOT NULL,
	created_at timestamptz NOT NULL,
	last_seen_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL,
	user_agent varchar(512),
	ip varchar(64),
	PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_sessions_expires_at ON sessions(expires_at);
CREATE INDEX IF NOT EXISTS idx_sessions_user_id ON sessions(user_id);
CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_hash ON sessions(hash);

-- The database itself refuses a membership that points at nothing.
CREATE TABLE IF NOT EXISTS aggregate_members (
	aggregate_uuid varchar(36) NOT NULL REFERENCES aggregates(uuid) ON DELETE CASCADE,
	provider_uuid varchar(36) NOT NULL REFERENCES providers(uuid) ON DELETE CASCADE,
	PRIMARY KEY (aggregate_uuid, provider_uuid)
);
CREATE INDEX IF NOT EXISTS idx_aggregate_members_provider ON aggregate_members (provider_uuid);

-- The provider pages on a big cloud: roots in name order without sorting
-- them all, and each kind (sharing, host, child) without reading every
-- row's traits. Queries must spell the condition exactly like this.
CREATE INDEX IF NOT EXISTS idx_providers_parent_name ON providers (parent_uuid, name);
CREATE INDEX IF NOT EXISTS idx_providers_sharing ON providers (name) WHERE (strpos(COALESCE(traits, ''), '"MISC_SHARES_VIA_AGGREGATE"') > 0);
CREATE INDEX IF NOT EXISTS idx_providers_hosts ON providers (name) WHERE parent_uuid IS NULL AND NOT (strpos(COALESCE(traits, ''), '"MISC_SHARES_VIA_AGGREGATE"') > 0);
CREATE INDEX IF NOT EXISTS idx_providers_children ON providers (name) WHERE parent_uuid IS NOT NULL AND NOT (strpos(COALESCE(traits, ''), '"MISC_SHARES_VIA_AGGREGATE"') > 0);

INSERT INTO corral_revision (id, revision) VALUES (1, 0) ON CONFLICT DO NOTHING;
