-- Custom resource classes and traits created through the Placement API
-- (models.ResourceClass, models.Trait); the standard ones are built in.

CREATE TABLE resource_classes (
	name varchar(255) NOT NULL,
	created_at timestamptz,
	PRIMARY KEY (name)
);

CREATE TABLE traits (
	name varchar(255) NOT NULL,
	created_at timestamptz,
	PRIMARY KEY (name)
);
