-- Syncs with a real cloud (store.SyncRecord) and what the last one kept of
-- the cloud's own view for the next (cloud_state, one row).

CREATE TABLE cloud_syncs (
	id bigserial,
	started_at timestamptz NOT NULL,
	finished_at timestamptz,
	duration_ms bigint,
	connection varchar(1000),
	actor varchar(255),
	requests bigint,
	providers_read bigint,
	providers_reused bigint,
	changes text,
	change_count bigint,
	disagreements text,
	warnings text,
	error text,
	revision bigint,
	PRIMARY KEY (id)
);
CREATE INDEX idx_cloud_syncs_started_at ON cloud_syncs(started_at);

CREATE TABLE cloud_state (
	id bigint NOT NULL,
	placement text NOT NULL,
	updated_at timestamptz,
	PRIMARY KEY (id)
);
