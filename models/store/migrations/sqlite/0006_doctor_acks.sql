-- Acknowledged doctor findings (store.FindingAck): who said a finding is
-- known, why, and the fingerprint of what it said then.

CREATE TABLE doctor_acks (
	finding_key text NOT NULL,
	code text NOT NULL,
	fingerprint text NOT NULL,
	actor text,
	reason text,
	created_at datetime,
	PRIMARY KEY (finding_key)
);
