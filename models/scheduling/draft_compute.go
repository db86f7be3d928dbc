package scheduling

import "corral/models"

// Changes that the Nova-compatible API and the console's aggregate form
// need beyond what drafts offered first.
const (
	OpRenameAggregate = "rename_aggregate" // aggregate, value (the new name)
)

// applyRename renames an aggregate; the new name must be free, as Nova's
// PUT /os-aggregates/{id} requires.
func applyRename(w *models.World, c Change, at string) error {
	ai := findAggregate(w, c.Aggregate)
	if c.Aggregate == "" || ai < 0 {
		return models.E(models.Invalid, at+".aggregate", "no aggregate named %q", c.Aggregate)
	}
	if c.Value == "" {
		return models.E(models.Invalid, at+".value", "rename_aggregate needs the new name in value")
	}
	agg := &w.Aggregates[ai]
	if c.Value == agg.Name {
		return nil
	}
	for i := range w.Aggregates {
		if i != ai && w.Aggregates[i].Name == c.Value {
			return models.E(models.Invalid, at+".value", "an aggregate named %q already exists", c.Value)
		}
	}
	agg.Name = c.Value
	return nil
}

// zoneKey is the metadata key Nova keeps an aggregate's zone under.
const zoneKey = "availability_zone"

// syncZone keeps an aggregate's zone and Nova's availability_zone metadata
// key in step, as the store does: after the zone field changed, the key
// follows it; after the metadata changed, the field follows the key.
func syncZone(a *models.Aggregate, fieldChanged bool) {
	const key = zoneKey
	if a.Metadata == nil {
		a.Metadata = map[string]string{}
	}
	switch {
	case fieldChanged && a.AvailabilityZone != nil && *a.AvailabilityZone != "":
		a.Metadata[key] = *a.AvailabilityZone
	case fieldChanged:
		a.AvailabilityZone = nil
		delete(a.Metadata, key)
	default:
		if v := a.Metadata[key]; v != "" {
			a.AvailabilityZone = &v
		} else {
			delete(a.Metadata, key)
			a.AvailabilityZone = nil
		}
	}
}
