-- Syncs with a real cloud (store.SyncRecord) and what the last one kept of
-- the cloud's own view for the next (cloud_state, one row).

CREATE TABLE cloud_syncs (
	id integer PRIMARY KEY AUTOINCREMENT,
	started_at datetime NOT NULL,
	finished_at datetime,
	duration_ms integer,
	connection text,
	actor text,
	requests integer,
	providers_read integer,
	providers_reused integer,
	changes text,
	change_count integer,
	disagreements text,
	warnings text,
	error text,
	revision integer
);
CREATE INDEX idx_cloud_syncs_started_at ON cloud_syncs(started_at);

CREATE TABLE cloud_state (
	id integer NOT NULL,
	placement text NOT NULL,
	updated_at datetime,
	PRIMARY KEY (id)
);
