package cloud

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"corral/models"
)

// Change is one object that differs between two worlds.
type Change struct {
	Kind   string        `json:"kind"` // provider, aggregate, flavor, server, server_group
	ID     string        `json:"id"`
	Name   string        `json:"name"`
	Op     string        `json:"op"` // added, removed, changed
	Fields []FieldChange `json:"fields,omitempty"`
}

// FieldChange is one field of a changed object.
type FieldChange struct {
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// String is the change on one line, as `corral sync` prints it.
func (c Change) String() string {
	switch c.Op {
	case "added":
		return fmt.Sprintf("+ %s %s", c.Kind, c.Name)
	case "removed":
		return fmt.Sprintf("- %s %s", c.Kind, c.Name)
	}
	var parts []string
	for _, f := range c.Fields {
		switch {
		case f.Before == "":
			parts = append(parts, fmt.Sprintf("%s: + %s", f.Field, f.After))
		case f.After == "":
			parts = append(parts, fmt.Sprintf("%s: - %s", f.Field, f.Before))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s → %s", f.Field, f.Before, f.After))
		}
	}
	return fmt.Sprintf("~ %s %s: %s", c.Kind, c.Name, strings.Join(parts, "; "))
}

// Diff lists what differs from old to new, kind by kind, in name order.
func Diff(old, new *models.World) []Change {
	var out []Change
	oldNames, newNames := providerNames(old), providerNames(new)
	for _, kind := range []string{"provider", "aggregate", "flavor", "server", "server_group"} {
		a, b := objects(kind, old, oldNames), objects(kind, new, newNames)
		ids := map[string]bool{}
		for id := range a {
			ids[id] = true
		}
		for id := range b {
			ids[id] = true
		}
		var cs []Change
		for id := range ids {
			x, inA := a[id]
			y, inB := b[id]
			switch {
			case !inA:
				cs = append(cs, Change{Kind: kind, ID: id, Name: y.name, Op: "added"})
			case !inB:
				cs = append(cs, Change{Kind: kind, ID: id, Name: x.name, Op: "removed"})
			default:
				if fs := diffFields(x.fields, y.fields); len(fs) > 0 {
					cs = append(cs, Change{Kind: kind, ID: id, Name: y.name, Op: "changed", Fields: fs})
				}
			}
		}
		slices.SortFunc(cs, func(p, q Change) int {
			if c := strings.Compare(p.Name, q.Name); c != 0 {
				return c
			}
			return strings.Compare(p.ID, q.ID)
		})
		out = append(out, cs...)
	}
	return out
}

type object struct {
	name   string
	fields map[string]string
}

func providerNames(w *models.World) map[string]string {
	m := map[string]string{}
	if w == nil {
		return m
	}
	for _, p := range w.Providers {
		m[p.UUID] = p.Name
	}
	return m
}

func nameList(ids []string, names map[string]string) string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if n, ok := names[id]; ok {
			out = append(out, n)
		} else {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func objects(kind string, w *models.World, names map[string]string) map[string]object {
	out := map[string]object{}
	if w == nil {
		return out
	}
	switch kind {
	case "provider":
		for _, p := range w.Providers {
			f := map[string]string{"name": p.Name, "traits": strings.Join(sorted(p.Traits), ",")}
			if p.ParentUUID != nil {
				f["parent"] = nameList([]string{*p.ParentUUID}, names)
			}
			if c := p.Compute; c != nil {
				f["compute"] = c.Summary()
				if c.HypervisorType != "" {
					f["hypervisor"] = fmt.Sprintf("%s %d %s", c.HypervisorType, c.HypervisorVersion, c.HostIP)
				}
			}
			for rc, inv := range p.Inventories {
				f["inventories."+rc] = fmt.Sprintf("total=%d reserved=%d ratio=%s", inv.Total, inv.Reserved, strconv.FormatFloat(inv.AllocationRatio, 'g', -1, 64))
			}
			for rc, n := range p.Usages {
				if n != 0 {
					f["usages."+rc] = strconv.FormatInt(n, 10)
				}
			}
			out[p.UUID] = object{p.Name, f}
		}
	case "aggregate":
		for _, a := range w.Aggregates {
			f := map[string]string{"name": a.Name, "members": nameList(a.Members, names)}
			if a.AvailabilityZone != nil {
				f["availability_zone"] = *a.AvailabilityZone
			}
			for k, v := range a.Metadata {
				if k != "availability_zone" {
					f["metadata."+k] = v
				}
			}
			out[a.UUID] = object{a.Name, f}
		}
	case "flavor":
		for _, fl := range w.Flavors {
			f := map[string]string{"name": fl.Name, "vcpus": strconv.Itoa(fl.VCPUs), "ram_mb": strconv.Itoa(fl.RAMMB), "disk_gb": strconv.Itoa(fl.DiskGB)}
			for k, v := range fl.ExtraSpecs {
				f["extra_specs."+k] = v
			}
			if fl.Private {
				f["access"] = "private: " + strings.Join(sorted(fl.Projects), ",")
			}
			out[fl.ID] = object{fl.Name, f}
		}
	case "server":
		for _, s := range w.Servers {
			out[s.UUID] = object{s.Name, map[string]string{"name": s.Name, "project": s.ProjectID, "user": s.UserID, "host": s.Host}}
		}
	case "server_group":
		for _, g := range w.ServerGroups {
			f := map[string]string{"name": g.Name, "project": g.ProjectID, "user": g.UserID, "policy": g.Policy, "members": strings.Join(sorted(g.Members), ",")}
			for k, v := range g.Rules {
				f["rules."+k] = strconv.Itoa(v)
			}
			out[g.UUID] = object{g.Name, f}
		}
	}
	return out
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// diffFields compares two field maps; set-valued fields (members, traits)
// say what was added and removed.
func diffFields(a, b map[string]string) []FieldChange {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []FieldChange
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		x, y := a[k], b[k]
		if x == y {
			continue
		}
		if k == "members" || k == "traits" {
			added, removed := setDiff(x, y)
			var parts []string
			for _, s := range added {
				parts = append(parts, "+"+s)
			}
			for _, s := range removed {
				parts = append(parts, "-"+s)
			}
			out = append(out, FieldChange{Field: k, Before: x, After: y})
			out[len(out)-1].After = strings.Join(parts, " ")
			out[len(out)-1].Before = "(" + strconv.Itoa(count(x)) + ")"
			continue
		}
		out = append(out, FieldChange{Field: k, Before: x, After: y})
	}
	return out
}

func count(list string) int {
	if list == "" {
		return 0
	}
	return strings.Count(list, ",") + 1
}

func setDiff(a, b string) (added, removed []string) {
	in := func(list string) map[string]bool {
		m := map[string]bool{}
		if list != "" {
			for _, s := range strings.Split(list, ",") {
				m[s] = true
			}
		}
		return m
	}
	x, y := in(a), in(b)
	for s := range y {
		if !x[s] {
			added = append(added, s)
		}
	}
	for s := range x {
		if !y[s] {
			removed = append(removed, s)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return
}
