-- An aggregate's two memberships: the members only Nova's aggregate has
-- (not in Placement's) and the hosts only Placement's has (not in Nova's),
-- as JSON lists of provider uuids; NULL when both sides agree.

ALTER TABLE aggregates ADD COLUMN not_in_placement text;
ALTER TABLE aggregates ADD COLUMN not_in_nova text;
