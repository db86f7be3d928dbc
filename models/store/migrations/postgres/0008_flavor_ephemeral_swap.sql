-- A flavor's ephemeral disk (GiB) and swap (MiB): Nova asks Placement for
-- DISK_GB = root + ephemeral + swap rounded up to GiB
-- (models.Flavor.EphemeralGB, .SwapMB).

ALTER TABLE flavors ADD COLUMN ephemeral_gb integer NOT NULL DEFAULT 0;
ALTER TABLE flavors ADD COLUMN swap_mb integer NOT NULL DEFAULT 0;
