-- Custom resource classes and traits created through the Placement API
-- (models.ResourceClass, models.Trait); the standard ones are built in.

CREATE TABLE resource_classes (
	name text NOT NULL,
	created_at datetime,
	PRIMARY KEY (name)
);

CREATE TABLE traits (
	name text NOT NULL,
	created_at datetime,
	PRIMARY KEY (name)
);
