-- Placement's consumers and their allocations (models.Consumer,
-- models.Allocation). A consumer's allocations go with it; a provider that
-- still has allocations cannot be deleted.

CREATE TABLE consumers (
	uuid text NOT NULL,
	project_id text NOT NULL,
	user_id text NOT NULL,
	consumer_type text,
	generation integer NOT NULL DEFAULT 0,
	PRIMARY KEY (uuid)
);
CREATE INDEX idx_consumers_project_id ON consumers(project_id);

CREATE TABLE allocations (
	consumer_uuid text NOT NULL REFERENCES consumers(uuid) ON DELETE CASCADE,
	provider_uuid text NOT NULL REFERENCES providers(uuid) ON DELETE RESTRICT,
	resource_class text NOT NULL,
	used integer NOT NULL,
	PRIMARY KEY (consumer_uuid, provider_uuid, resource_class)
);
CREATE INDEX idx_allocations_provider_uuid ON allocations(provider_uuid);
