-- The schema GORM's AutoMigrate created up to commit 7989f67, statement for
-- statement. Every statement is guarded with IF NOT EXISTS so that running
-- it on a database made by such a release (which has no corral_migrations
-- table) adopts that database as version 0001 and adds only what an older
-- release had not created yet (drafts, sessions, indexes).

CREATE TABLE IF NOT EXISTS providers (
	uuid text,
	name text NOT NULL,
	parent_uuid text,
	root_uuid text,
	traits text,
	inventories text,
	usages text,
	generation integer NOT NULL DEFAULT 0,
	created_at datetime,
	updated_at datetime,
	PRIMARY KEY (uuid)
);
CREATE INDEX IF NOT EXISTS idx_providers_root_uuid ON providers(root_uuid);
CREATE INDEX IF NOT EXISTS idx_providers_parent_uuid ON providers(parent_uuid);
CREATE UNIQUE INDEX IF NOT EXISTS idx_providers_name ON providers(name);

CREATE TABLE IF NOT EXISTS aggregates (
	id integer PRIMARY KEY AUTOINCREMENT,
	uuid text NOT NULL,
	name text NOT NULL,
	availability_zone text,
	metadata text,
	generation integer NOT NULL DEFAULT 0,
	created_at datetime,
	updated_at datetime
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_aggregates_name ON aggregates(name);
CREATE UNIQUE INDEX IF NOT EXISTS idx_aggregates_uuid ON aggregates(uuid);

CREATE TABLE IF NOT EXISTS flavors (
	id text,
	name text NOT NULL,
	v_cpus integer,
	ram_mb integer,
	disk_gb integer,
	extra_specs text,
	generation integer NOT NULL DEFAULT 0,
	created_at datetime,
	updated_at datetime,
	PRIMARY KEY (id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_flavors_name ON flavors(name);

CREATE TABLE IF NOT EXISTS servers (
	uuid text,
	name text,
	project_id text,
	user_id text,
	host text,
	created_at datetime,
	updated_at datetime,
	PRIMARY KEY (uuid)
);
CREATE INDEX IF NOT EXISTS idx_servers_host ON servers(host);
CREATE INDEX IF NOT EXISTS idx_servers_project_id ON servers(project_id);

CREATE TABLE IF NOT EXISTS server_groups (
	uuid text,
	name text,
	project_id text,
	user_id text,
	policy text NOT NULL,
	rules text,
	members text,
	generation integer NOT NULL DEFAULT 0,
	created_at datetime,
	updated_at datetime,
	PRIMARY KEY (uuid)
);
CREATE INDEX IF NOT EXISTS idx_server_groups_project_id ON server_groups(project_id);

CREATE TABLE IF NOT EXISTS users (
	id integer PRIMARY KEY AUTOINCREMENT,
	name text NOT NULL,
	password_hash text NOT NULL,
	role text NOT NULL,
	project_id text,
	created_at datetime,
	updated_at datetime
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_users_name ON users(name);

CREATE TABLE IF NOT EXISTS api_tokens (
	id integer PRIMARY KEY AUTOINCREMENT,
	user_id integer NOT NULL,
	name text,
	hash text NOT NULL,
	prefix text,
	created_at datetime,
	last_used_at datetime,
	revoked_at datetime
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_api_tokens_hash ON api_tokens(hash);
CREATE INDEX IF NOT EXISTS idx_api_tokens_user_id ON api_tokens(user_id);

CREATE TABLE IF NOT EXISTS audit_events (
	id integer PRIMARY KEY AUTOINCREMENT,
	at datetime NOT NULL,
	actor text,
	via text,
	action text,
	object_type text,
	object_id text,
	object_name text,
	before text,
	after text
);
CREATE INDEX IF NOT EXISTS idx_audit_events_object_id ON audit_events(object_id);
CREATE INDEX IF NOT EXISTS idx_audit_events_object_type ON audit_events(object_type);
CREATE INDEX IF NOT EXISTS idx_audit_events_actor ON audit_events(actor);
CREATE INDEX IF NOT EXISTS idx_audit_events_at ON audit_events(at);

CREATE TABLE IF NOT EXISTS quota (
	project_id text,
	resource text,
	"limit" integer,
	PRIMARY KEY (project_id, resource)
);

CREATE TABLE IF NOT EXISTS corral_revision (
	id integer,
	revision integer NOT NULL DEFAULT 0,
	PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS corral_settings (
	id integer,
	data text NOT NULL,
	generation integer NOT NULL DEFAULT 0,
	updated_at datetime,
	PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS corral_session_keys (
	id integer,
	hash_key blob NOT NULL,
	block_key blob NOT NULL,
	created_at datetime,
	PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS corral_drafts (
	id text,
	name text NOT NULL,
	author text NOT NULL,
	base_revision integer NOT NULL DEFAULT 0,
	changes text NOT NULL,
	generations text,
	version integer NOT NULL DEFAULT 0,
	created_at datetime,
	updated_at datetime,
	PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS sessions (
	id integer PRIMARY KEY AUTOINCREMENT,
	hash text NOT NULL,
	user_id integer NOT NULL,
	created_at datetime NOT NULL,
	last_seen_at datetime NOT NULL,
	expires_at datetime NOT NULL,
	user_agent text,
	ip text
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
CREATE INDEX IF NOT EXISTS idx_providers_sharing ON providers (name) WHERE (instr(COALESCE(traits, ''), '"MISC_SHARES_VIA_AGGREGATE"') > 0);
CREATE INDEX IF NOT EXISTS idx_providers_hosts ON providers (name) WHERE parent_uuid IS NULL AND NOT (instr(COALESCE(traits, ''), '"MISC_SHARES_VIA_AGGREGATE"') > 0);
CREATE INDEX IF NOT EXISTS idx_providers_children ON providers (name) WHERE parent_uuid IS NOT NULL AND NOT (instr(COALESCE(traits, ''), '"MISC_SHARES_VIA_AGGREGATE"') > 0);

INSERT INTO corral_revision (id, revision) VALUES (1, 0) ON CONFLICT DO NOTHING;
