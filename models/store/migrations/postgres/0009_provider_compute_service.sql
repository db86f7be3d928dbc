-- A host's nova-compute service (status, state, forced down, last heartbeat
-- while down), as JSON: what ComputeFilter reads
-- (models.Provider.ComputeService).

ALTER TABLE providers ADD COLUMN compute_service text;
