-- Placement's consumers and their allocations (models.Consumer,
-- models.Allocation). A consumer's allocations go with it; a provider that
-- still has allocations cannot be deleted.

CREATE TABLE consumers (
	uuid varchar(36) NOT NULL,
	project_id varchar(255) NOT NULL,
	user_id varchar(255) NOT NULL,
	consumer_type varchar(255),
	generation bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (uuid)
);
CREATE INDEX idx_consumers_project_id ON consumers(project_id);

CREATE TABLE allocations (
	consumer_uuid varchar(36) NOT NULL REFERENCES consumers(uuid) ON DELETE CASCADE,
	provider_uuid varchar(36) NOT NULL REFERENCES providers(uuid) ON DELETE RESTRICT,
	resource_class varchar(255) NOT NULL,
	used bigint NOT NULL,
	PRIMARY KEY (consumer_uuid, provider_uuid, resource_class)
);
CREATE INDEX idx_allocations_provider_uuid ON allocations(provider_uuid);
