-- Flavor access (Nova's os-flavor-access): a private flavor is usable only
-- by the projects listed with it (models.Flavor.Private, .Projects).

ALTER TABLE flavors ADD COLUMN private numeric NOT NULL DEFAULT false;
ALTER TABLE flavors ADD COLUMN projects text;
