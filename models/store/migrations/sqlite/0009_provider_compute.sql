-- A host's nova-compute service (status, state, forced down, last heartbeat
-- while down), as JSON: what ComputeFilter reads
-- (models.Provider.Compute).

ALTER TABLE providers ADD COLUMN compute text;
