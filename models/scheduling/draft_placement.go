package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"corral/models"
)

// Change operations of Placement's resources: the writes of the
// Placement-compatible API, each as a change, so that they go through the
// one write path like every other edit.
const (
	OpCreateProvider        = "create_provider"         // provider (name), [uuid, parent_provider]
	OpDeleteProvider        = "delete_provider"         // provider
	OpRenameProvider        = "rename_provider"         // provider, new_name
	OpSetProviderParent     = "set_provider_parent"     // provider, parent_provider ("" makes it a root)
	OpSetInventories        = "set_inventories"         // provider, inventories (the whole set)
	OpSetTraits             = "set_traits"              // provider, traits (the whole set)
	OpSetProviderAggregates = "set_provider_aggregates" // provider, aggregates (uuids, the whole set)
	OpCreateResourceClass   = "create_resource_class"   // resource_class
	OpDeleteResourceClass   = "delete_resource_class"   // resource_class
	OpCreateTrait           = "create_trait"            // trait (an existing one is kept)
	OpDeleteTrait           = "delete_trait"            // trait
	OpSetAllocations        = "set_allocations"         // consumer, project, user, [consumer_type, allocations]
)

// PlacementOps lists the operations of Placement's resources, in the order
// docs/drafts.md describes them.
var PlacementOps = []string{
	OpCreateProvider, OpDeleteProvider, OpRenameProvider, OpSetProviderParent, OpSetInventories, OpSetTraits,
	OpSetProviderAggregates, OpCreateResourceClass, OpDeleteResourceClass, OpCreateTrait, OpDeleteTrait, OpSetAllocations,
}

// PlacementFields are the fields of a Change that only the operations of
// Placement's resources take. They are part of Change (embedded), so a
// change is still one flat JSON object.
type PlacementFields struct {
	// Parent is the parent provider's UUID (create_provider,
	// set_provider_parent).
	Parent *string `json:"parent_provider,omitempty"`
	// NewName is a provider's new name (rename_provider).
	NewName string `json:"new_name,omitempty"`
	// Inventories is a provider's whole inventory (set_inventories).
	Inventories map[string]models.Inventory `json:"inventories,omitempty"`
	// Traits is a provider's whole set of traits (set_traits).
	Traits []string `json:"traits,omitempty"`
	// Aggregates is a provider's whole set of aggregates, by UUID
	// (set_provider_aggregates); an unknown UUID is a new aggregate named
	// after it, as Placement creates them on demand.
	Aggregates []string `json:"aggregates,omitempty"`
	// Consumer, ConsumerType and Allocations replace one consumer's
	// allocations (set_allocations); no allocations removes them and the
	// consumer. The change's generation is the consumer's: -1 when the
	// writer expects a new consumer.
	Consumer     string             `json:"consumer,omitempty"`
	ConsumerType string             `json:"consumer_type,omitempty"`
	Allocations  []ChangeAllocation `json:"allocations,omitempty"`
}

// ChangeAllocation is one amount of one resource class a consumer holds on
// one provider (by UUID).
type ChangeAllocation struct {
	Provider      string `json:"provider"`
	ResourceClass string `json:"resource_class"`
	Used          int64  `json:"used"`
}

// NoGeneration is the generation a change names for an object that must
// not exist yet (a new consumer of set_allocations).
const NoGeneration int64 = -1

// IsPlacementOp reports whether op is one of PlacementOps.
func IsPlacementOp(op string) bool { return slices.Contains(PlacementOps, op) }

// reshapesProviders reports whether op adds, removes, renames or moves
// providers (so lookups by name or UUID must be built again).
func reshapesProviders(op string) bool {
	return op == OpCreateProvider || op == OpDeleteProvider || op == OpRenameProvider || op == OpSetProviderParent
}

// findProvider finds a provider by UUID, then name.
func findProvider(w *models.World, ref string) int {
	for i := range w.Providers {
		if w.Providers[i].UUID == ref {
			return i
		}
	}
	for i := range w.Providers {
		if w.Providers[i].Name == ref {
			return i
		}
	}
	return -1
}

// applyPlacementChange applies one change of PlacementOps to w, whose
// providers (and consumers, for set_allocations) the caller has copied.
func applyPlacementChange(w *models.World, c Change, at string) error {
	switch c.Op {
	case OpCreateResourceClass, OpDeleteResourceClass:
		// The catalog of classes is not part of the world: only the name
		// is checked.
		if !validTraitName(c.ResourceClass) {
			return models.E(models.Invalid, at+".resource_class", "%q is not a resource class (A-Z, 0-9 and _, at most 255)", c.ResourceClass)
		}
		return nil
	case OpCreateTrait, OpDeleteTrait:
		if !validTraitName(c.Trait) {
			return models.E(models.Invalid, at+".trait", "%q is not a trait name (A-Z, 0-9 and _, at most 255)", c.Trait)
		}
		return nil
	case OpSetAllocations:
		return applyAllocations(w, c, at)
	case OpCreateProvider:
		return createProvider(w, c, at)
	}
	if c.Provider == "" {
		return models.E(models.Invalid, at+".provider", "%s needs a provider", c.Op)
	}
	pi := findProvider(w, c.Provider)
	if pi < 0 {
		return models.E(models.Invalid, at+".provider", "no provider named %q", c.Provider)
	}
	p := &w.Providers[pi]
	switch c.Op {
	case OpDeleteProvider:
		return deleteProvider(w, pi, at)
	case OpRenameProvider:
		if err := checkProviderName(w, c.NewName, p.UUID, at+".new_name"); err != nil {
			return err
		}
		p.Name = c.NewName
	case OpSetProviderParent:
		return setProviderParent(w, pi, c.Parent, at)
	case OpSetInventories:
		return setInventories(p, c.Inventories, at)
	case OpSetTraits:
		traits := make([]string, 0, len(c.Traits))
		for _, t := range c.Traits {
			if !validTraitName(t) {
				return models.E(models.Invalid, at+".traits", "%q is not a trait name (A-Z, 0-9 and _, at most 255)", t)
			}
			traits = append(traits, t)
		}
		slices.Sort(traits)
		p.Traits = slices.Compact(traits)
	case OpSetProviderAggregates:
		return setProviderAggregates(w, p.UUID, c.Aggregates, at)
	default:
		return models.E(models.Invalid, at+".op", "unknown change %q", c.Op)
	}
	return nil
}

func checkProviderName(w *models.World, name, self, field string) error {
	if strings.TrimSpace(name) == "" || len(name) > 200 {
		return models.E(models.Invalid, field, "a resource provider needs a name of at most 200 characters")
	}
	for i := range w.Providers {
		if w.Providers[i].Name == name && w.Providers[i].UUID != self {
			return models.E(models.Invalid, field, "a resource provider named %q already exists", name)
		}
	}
	return nil
}

func createProvider(w *models.World, c Change, at string) error {
	if err := checkProviderName(w, c.Provider, "", at+".provider"); err != nil {
		return err
	}
	u := c.UUID
	if u == "" {
		u = models.NewUUID()
	} else if !models.ValidUUID(u) || slices.ContainsFunc(w.Providers, func(p models.Provider) bool { return p.UUID == u }) {
		return models.E(models.Invalid, at+".uuid", "%q is not a free UUID", u)
	}
	p := models.Provider{UUID: u, Name: c.Provider, RootUUID: u, Traits: []string{}, Inventories: map[string]models.Inventory{}}
	if c.Parent != nil && *c.Parent != "" {
		pi := findProvider(w, *c.Parent)
		if pi < 0 {
			return models.E(models.Invalid, at+".parent_provider", "no provider named %q", *c.Parent)
		}
		parent := w.Providers[pi].UUID
		p.ParentUUID, p.RootUUID = &parent, rootOf(&w.Providers[pi])
	}
	w.Providers = append(w.Providers, p)
	return nil
}

func rootOf(p *models.Provider) string {
	if p.RootUUID == "" {
		return p.UUID
	}
	return p.RootUUID
}

func deleteProvider(w *models.World, pi int, at string) error {
	p := &w.Providers[pi]
	for i := range w.Providers {
		if w.Providers[i].ParentUUID != nil && *w.Providers[i].ParentUUID == p.UUID {
			return models.E(models.Invalid, at+".provider", "resource provider %s has children; delete them first", p.Name)
		}
	}
	if p.IsHost() {
		for i := range w.Servers {
			if w.Servers[i].Host == p.Name {
				return models.E(models.Invalid, at+".provider", "host %s still has servers; move or delete them first", p.Name)
			}
		}
	}
	for i := range w.Aggregates {
		a := &w.Aggregates[i]
		a.Members = slices.DeleteFunc(a.Members, func(m string) bool { return m == p.UUID })
		a.Mirror(p.UUID)
	}
	w.Providers = slices.Delete(w.Providers, pi, pi+1)
	return nil
}

// setProviderParent moves provider pi (and its subtree) under parent, or
// makes it a root; a cycle is refused.
func setProviderParent(w *models.World, pi int, parent *string, at string) error {
	p := &w.Providers[pi]
	oldRoot := rootOf(p)
	newRoot := p.UUID
	var parentUUID *string
	if parent != nil && *parent != "" {
		qi := findProvider(w, *parent)
		if qi < 0 {
			return models.E(models.Invalid, at+".parent_provider", "no provider named %q", *parent)
		}
		for cur := qi; ; {
			if w.Providers[cur].UUID == p.UUID {
				return models.E(models.Invalid, at+".parent_provider", "%s is %s or below it; that would make a cycle", w.Providers[qi].Name, p.Name)
			}
			up := w.Providers[cur].ParentUUID
			if up == nil {
				break
			}
			if cur = findProvider(w, *up); cur < 0 {
				break
			}
		}
		u := w.Providers[qi].UUID
		parentUUID, newRoot = &u, rootOf(&w.Providers[qi])
	}
	p.ParentUUID = parentUUID
	if newRoot == oldRoot && parentUUID != nil {
		return nil
	}
	// Everything below p follows it to its new root.
	below := map[string]bool{p.UUID: true}
	for changed := true; changed; {
		changed = false
		for i := range w.Providers {
			q := &w.Providers[i]
			if q.ParentUUID != nil && below[*q.ParentUUID] && !below[q.UUID] {
				below[q.UUID], changed = true, true
			}
		}
	}
	for i := range w.Providers {
		if below[w.Providers[i].UUID] {
			w.Providers[i].RootUUID = newRoot
		}
	}
	return nil
}

func setInventories(p *models.Provider, inv map[string]models.Inventory, at string) error {
	next := make(map[string]models.Inventory, len(inv))
	for _, rc := range slices.Sorted(maps.Keys(inv)) {
		v := inv[rc]
		if !validTraitName(rc) {
			return models.E(models.Invalid, at+".inventories", "%q is not a resource class (A-Z, 0-9 and _, at most 255)", rc)
		}
		if v.Total < 0 || v.Reserved < 0 || v.AllocationRatio < 0 {
			return models.E(models.Invalid, at+".inventories", "inventory %s has a negative value", rc)
		}
		next[rc] = v
	}
	var inUse []string
	for _, rc := range slices.Sorted(maps.Keys(p.Inventories)) {
		if _, keep := next[rc]; !keep && p.Usages[rc] > 0 {
			inUse = append(inUse, rc)
		}
	}
	if len(inUse) > 0 {
		return models.E(models.Invalid, at+".inventories", "inventory in use: %s on provider %s", strings.Join(inUse, ", "), p.Name)
	}
	p.Inventories = next
	return nil
}

// setProviderAggregates makes provider prov a member of exactly the
// aggregates aggs (by UUID); an unknown UUID is a new aggregate named
// after it.
func setProviderAggregates(w *models.World, prov string, aggs []string, at string) error {
	want := map[string]bool{}
	for _, u := range aggs {
		if !models.ValidUUID(u) {
			return models.E(models.Invalid, at+".aggregates", "%q is not a UUID", u)
		}
		want[u] = true
	}
	var id int64
	for i := range w.Aggregates {
		a := &w.Aggregates[i]
		id = max(id, a.ID)
		has := slices.Contains(a.Members, prov)
		novaOnly := has && slices.Contains(a.NotInPlacement, prov)
		switch {
		case want[a.UUID] && !has:
			a.Members = append(a.Members, prov)
		case !want[a.UUID] && has && !novaOnly:
			a.Members = slices.DeleteFunc(a.Members, func(m string) bool { return m == prov })
		}
		if want[a.UUID] || !novaOnly {
			// corral keeps a provider's memberships equal on both sides
			// when it edits them, as Nova's mirroring does; a host only
			// Nova has stays Nova's when Placement's list leaves it out.
			a.Mirror(prov)
		}
		delete(want, a.UUID)
	}
	for _, u := range slices.Sorted(maps.Keys(want)) {
		id++
		w.Aggregates = append(w.Aggregates, models.Aggregate{ID: id, UUID: u, Name: u, Metadata: map[string]string{}, Members: []string{prov}})
	}
	return nil
}

// applyAllocations replaces one consumer's allocations in w.Consumers and
// moves the usages of the providers involved by the difference.
func applyAllocations(w *models.World, c Change, at string) error {
	if !models.ValidUUID(c.Consumer) {
		return models.E(models.Invalid, at+".consumer", "%q is not a consumer UUID", c.Consumer)
	}
	usages := map[string]map[string]int64{}
	add := func(prov, rc string, n int64) {
		if usages[prov] == nil {
			usages[prov] = map[string]int64{}
		}
		usages[prov][rc] += n
	}
	var next []models.Allocation
	for i, a := range c.Allocations {
		if a.Used < 0 || a.ResourceClass == "" {
			return models.E(models.Invalid, fmt.Sprintf("%s.allocations[%d]", at, i), "an allocation needs a resource class and an amount ≥ 0")
		}
		if findProvider(w, a.Provider) < 0 {
			return models.E(models.Invalid, fmt.Sprintf("%s.allocations[%d].provider", at, i), "no provider named %q", a.Provider)
		}
		if a.Used > 0 {
			next = append(next, models.Allocation{ConsumerUUID: c.Consumer, ProviderUUID: a.Provider, ResourceClass: a.ResourceClass, Used: a.Used})
			add(a.Provider, a.ResourceClass, a.Used)
		}
	}
	ci := slices.IndexFunc(w.Consumers, func(x models.Consumer) bool { return x.UUID == c.Consumer })
	if ci >= 0 {
		for _, a := range w.Consumers[ci].Allocations {
			add(a.ProviderUUID, a.ResourceClass, -a.Used)
		}
	}
	w.Consumers = slices.Clone(w.Consumers)
	switch {
	case len(next) == 0 && ci >= 0:
		w.Consumers = slices.Delete(w.Consumers, ci, ci+1)
	case len(next) > 0 && ci >= 0:
		w.Consumers[ci] = models.Consumer{UUID: c.Consumer, ProjectID: c.Project, UserID: c.User, ConsumerType: c.ConsumerType,
			Generation: w.Consumers[ci].Generation + 1, Allocations: next}
	case len(next) > 0:
		w.Consumers = append(w.Consumers, models.Consumer{UUID: c.Consumer, ProjectID: c.Project, UserID: c.User, ConsumerType: c.ConsumerType,
			Generation: 1, Allocations: next})
		slices.SortFunc(w.Consumers, func(a, b models.Consumer) int { return strings.Compare(a.UUID, b.UUID) })
	}
	for prov, byClass := range usages {
		p := &w.Providers[findProvider(w, prov)]
		u := maps.Clone(p.Usages)
		if u == nil {
			u = map[string]int64{}
		}
		for rc, n := range byClass {
			u[rc] = max(0, u[rc]+n)
		}
		p.Usages = u
	}
	return nil
}

// describePlacementChange is DescribeChange for PlacementOps.
func describePlacementChange(c Change) string {
	switch c.Op {
	case OpCreateProvider:
		if c.Parent != nil && *c.Parent != "" {
			return fmt.Sprintf("create provider %s under %s", c.Provider, *c.Parent)
		}
		return "create provider " + c.Provider
	case OpDeleteProvider:
		return "delete provider " + c.Provider
	case OpRenameProvider:
		return fmt.Sprintf("rename provider %s to %s", c.Provider, c.NewName)
	case OpSetProviderParent:
		if c.Parent == nil || *c.Parent == "" {
			return "make provider " + c.Provider + " a root"
		}
		return fmt.Sprintf("move provider %s under %s", c.Provider, *c.Parent)
	case OpSetInventories:
		parts := make([]string, 0, len(c.Inventories))
		for _, rc := range slices.Sorted(maps.Keys(c.Inventories)) {
			parts = append(parts, fmt.Sprintf("%s=%d", rc, c.Inventories[rc].Total))
		}
		return fmt.Sprintf("set the inventories of provider %s to [%s]", c.Provider, strings.Join(parts, ", "))
	case OpSetTraits:
		return fmt.Sprintf("set the traits of provider %s to [%s]", c.Provider, strings.Join(c.Traits, ", "))
	case OpSetProviderAggregates:
		return fmt.Sprintf("set the aggregates of provider %s to [%s]", c.Provider, strings.Join(c.Aggregates, ", "))
	case OpCreateResourceClass:
		return "create resource class " + c.ResourceClass
	case OpDeleteResourceClass:
		return "delete resource class " + c.ResourceClass
	case OpCreateTrait:
		return "create trait " + c.Trait
	case OpDeleteTrait:
		return "delete trait " + c.Trait
	case OpSetAllocations:
		if len(c.Allocations) == 0 {
			return "remove the allocations of consumer " + c.Consumer
		}
		return fmt.Sprintf("set %d allocations of consumer %s", len(c.Allocations), c.Consumer)
	}
	return strings.ReplaceAll(c.Op, "_", " ")
}

// providerChangesBetween returns the changes that create, rename, move and
// delete providers to turn a's providers into b's. Created providers come
// with their traits and inventories; the caller adds memberships.
func providerChangesBetween(a, b *models.World, inA map[string]*models.Provider) (first, last []Change) {
	inB := make(map[string]bool, len(b.Providers))
	for i := range b.Providers {
		y := &b.Providers[i]
		inB[y.UUID] = true
		x, ok := inA[y.UUID]
		if !ok {
			var parent *string
			if y.ParentUUID != nil {
				v := *y.ParentUUID
				parent = &v
			}
			first = append(first, Change{Op: OpCreateProvider, Provider: y.Name, UUID: y.UUID, PlacementFields: PlacementFields{Parent: parent}})
			if len(y.Inventories) > 0 {
				first = append(first, Change{Op: OpSetInventories, Provider: y.UUID, PlacementFields: PlacementFields{Inventories: maps.Clone(y.Inventories)}})
			}
			if len(y.Traits) > 0 {
				first = append(first, Change{Op: OpSetTraits, Provider: y.UUID, PlacementFields: PlacementFields{Traits: slices.Clone(y.Traits)}})
			}
			continue
		}
		if x.Name != y.Name {
			first = append(first, Change{Op: OpRenameProvider, Provider: y.UUID, PlacementFields: PlacementFields{NewName: y.Name}})
		}
		if px, py := ptrOr(x.ParentUUID), ptrOr(y.ParentUUID); px != py {
			first = append(first, Change{Op: OpSetProviderParent, Provider: y.UUID, PlacementFields: PlacementFields{Parent: &py}})
		}
	}
	for i := range a.Providers {
		if x := &a.Providers[i]; !inB[x.UUID] {
			last = append(last, Change{Op: OpDeleteProvider, Provider: x.UUID})
		}
	}
	// Children go before their parents.
	slices.Reverse(last)
	return first, last
}

// consumerChangesBetween returns the set_allocations that turn a's
// consumers into b's.
func consumerChangesBetween(a, b *models.World) []Change {
	if len(a.Consumers) == 0 && len(b.Consumers) == 0 {
		return nil
	}
	byA := make(map[string]*models.Consumer, len(a.Consumers))
	for i := range a.Consumers {
		byA[a.Consumers[i].UUID] = &a.Consumers[i]
	}
	var out []Change
	seen := map[string]bool{}
	for i := range b.Consumers {
		y := &b.Consumers[i]
		seen[y.UUID] = true
		if x, ok := byA[y.UUID]; ok && x.ProjectID == y.ProjectID && x.UserID == y.UserID && slices.Equal(x.Allocations, y.Allocations) {
			continue
		}
		out = append(out, AllocationsChange(y))
	}
	for i := range a.Consumers {
		if x := &a.Consumers[i]; !seen[x.UUID] {
			out = append(out, Change{Op: OpSetAllocations, Project: x.ProjectID, User: x.UserID, PlacementFields: PlacementFields{Consumer: x.UUID}})
		}
	}
	return out
}

// AllocationsChange is the set_allocations that gives consumer c exactly
// the allocations it holds.
func AllocationsChange(c *models.Consumer) Change {
	ch := Change{Op: OpSetAllocations, Project: c.ProjectID, User: c.UserID,
		PlacementFields: PlacementFields{Consumer: c.UUID, ConsumerType: c.ConsumerType}}
	for _, a := range c.Allocations {
		ch.Allocations = append(ch.Allocations, ChangeAllocation{Provider: a.ProviderUUID, ResourceClass: a.ResourceClass, Used: a.Used})
	}
	return ch
}

func ptrOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
