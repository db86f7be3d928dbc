package scheduling

import (
	"maps"
	"strings"

	"corral/models"
)

// Changes that the Nova-compatible API and the console's forms need
// beyond what drafts offered first.
const (
	OpRenameAggregate = "rename_aggregate" // aggregate, value (the new name)
	OpCreateFlavor    = "create_flavor"    // flavor (name), size, [uuid (the flavor id), metadata (extra specs)]
	OpUpdateFlavor    = "update_flavor"    // flavor, [value (new name)], [size]
	OpDeleteFlavor    = "delete_flavor"    // flavor
)

// FlavorSize is a flavor's size in a create_flavor or update_flavor
// change.
type FlavorSize struct {
	VCPUs  int `json:"vcpus"`
	RAMMB  int `json:"ram_mb"`
	DiskGB int `json:"disk_gb"`
}

// editsFlavor reports whether op changes a flavor.
func editsFlavor(op string) bool {
	switch op {
	case OpSetExtraSpec, OpUnsetExtraSpec, OpCreateFlavor, OpUpdateFlavor, OpDeleteFlavor:
		return true
	}
	return false
}

// applyFlavorLifecycle creates, renames, resizes or deletes a flavor.
func applyFlavorLifecycle(w *models.World, c Change, at string) error {
	name := strings.TrimSpace(c.Value)
	if c.Op == OpCreateFlavor {
		name = strings.TrimSpace(c.Flavor)
	}
	taken := func(except int) error {
		if name == "" || len(name) > 255 {
			return models.E(models.Invalid, at+".flavor", "a flavor name is 1 to 255 characters")
		}
		for i := range w.Flavors {
			if i != except && w.Flavors[i].Name == name {
				return models.E(models.Invalid, at+".flavor", "a flavor named %q already exists", name)
			}
		}
		return nil
	}
	if c.Size != nil && (c.Size.VCPUs < 0 || c.Size.RAMMB < 0 || c.Size.DiskGB < 0) {
		return models.E(models.Invalid, at+".size", "a flavor's vcpus, ram_mb and disk_gb cannot be negative")
	}
	if c.Op == OpCreateFlavor {
		if c.Size == nil {
			return models.E(models.Invalid, at+".size", "create_flavor needs a size")
		}
		if err := taken(-1); err != nil {
			return err
		}
		id := c.UUID
		if id == "" {
			id = models.NewUUID()
		} else if findFlavor(w, id) >= 0 {
			return models.E(models.Invalid, at+".uuid", "a flavor with id %q already exists", id)
		}
		specs := maps.Clone(c.Metadata)
		if specs == nil {
			specs = map[string]string{}
		}
		w.Flavors = append(w.Flavors, models.Flavor{ID: id, Name: name, VCPUs: c.Size.VCPUs, RAMMB: c.Size.RAMMB, DiskGB: c.Size.DiskGB, ExtraSpecs: specs})
		return nil
	}
	fi := findFlavor(w, c.Flavor)
	if c.Flavor == "" || fi < 0 {
		return models.E(models.Invalid, at+".flavor", "no flavor named %q", c.Flavor)
	}
	if c.Op == OpDeleteFlavor {
		w.Flavors = append(w.Flavors[:fi:fi], w.Flavors[fi+1:]...)
		return nil
	}
	f := &w.Flavors[fi]
	if name != "" && name != f.Name {
		if err := taken(fi); err != nil {
			return err
		}
		f.Name = name
	}
	if c.Size != nil {
		f.VCPUs, f.RAMMB, f.DiskGB = c.Size.VCPUs, c.Size.RAMMB, c.Size.DiskGB
	}
	return nil
}

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

// deletedFlavors are the changes deleting the flavors of a that b lacks.
func deletedFlavors(a, b *models.World) []Change {
	inB := make(map[string]bool, len(b.Flavors))
	for i := range b.Flavors {
		inB[b.Flavors[i].ID] = true
	}
	var out []Change
	for i := range a.Flavors {
		if !inB[a.Flavors[i].ID] {
			out = append(out, Change{Op: OpDeleteFlavor, Flavor: a.Flavors[i].ID})
		}
	}
	return out
}

// flavorUpdate is the change renaming or resizing x into y, nil when
// neither differs.
func flavorUpdate(x, y *models.Flavor) *Change {
	c := Change{Op: OpUpdateFlavor, Flavor: y.ID}
	if x.Name != y.Name {
		c.Value = y.Name
	}
	if x.VCPUs != y.VCPUs || x.RAMMB != y.RAMMB || x.DiskGB != y.DiskGB {
		c.Size = &FlavorSize{VCPUs: y.VCPUs, RAMMB: y.RAMMB, DiskGB: y.DiskGB}
	}
	if c.Value == "" && c.Size == nil {
		return nil
	}
	return &c
}
