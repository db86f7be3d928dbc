package placement

import (
	"sync"

	"corral/models"
)

// The per-class and per-trait index the candidate search reads: each
// class's inventories and usages in provider order, the providers with room
// for an amount (cached), the providers carrying a trait, and the sharing
// providers and tree roots having a class.

// catalogIndex is built once per Index, on first use, and shared by the
// indexes WithAggregates derives: it depends on the providers alone.
type catalogIndex struct {
	once     sync.Once
	byClass  map[string][]int32
	classes  map[string]*classInv
	hasTrees bool
	mu       sync.Mutex
	byTrait  map[string]Bitset
	// fit caches fitting's answers: a preview asks for a flavor's few
	// amounts over and over.
	fit map[fitKey]Bitset
}

// fitKey is one requested class and amount.
type fitKey struct {
	class  string
	amount int64
}

// maxFitCache bounds the fitting cache (a request may name any amount).
const maxFitCache = 256

func (ix *Index) resIndex() *catalogIndex {
	c := ix.res
	c.once.Do(func() {
		c.byClass = map[string][]int32{}
		c.byTrait = map[string]Bitset{}
		c.classes = map[string]*classInv{}
		c.fit = map[fitKey]Bitset{}
		for i, p := range ix.providers {
			for rc, inv := range p.Inventories {
				c.byClass[rc] = append(c.byClass[rc], int32(i))
				ci := c.classes[rc]
				if ci == nil {
					ci = &classInv{}
					c.classes[rc] = ci
				}
				ci.prov = append(ci.prov, int32(i))
				ci.inv = append(ci.inv, Normalized(inv))
				ci.used = append(ci.used, p.Usages[rc])
			}
			if ix.parent[i] >= 0 {
				c.hasTrees = true
			}
		}
		for _, ci := range c.classes {
			ci.pos = make([]int32, len(ix.providers))
			for i := range ci.pos {
				ci.pos[i] = -1
			}
			for j, p := range ci.prov {
				ci.pos[p] = int32(j)
			}
		}
	})
	return c
}

// Fitting is the set of providers with room for amount of class at their
// own usage (Placement's per-class check, Check), cached per index. Do
// not modify.
func (ix *Index) Fitting(class string, amount int64) Bitset {
	c := ix.resIndex()
	k := fitKey{class, amount}
	c.mu.Lock()
	b, ok := c.fit[k]
	c.mu.Unlock()
	if ok {
		return b
	}
	b = NewBitset(len(ix.providers))
	if ci := c.classes[class]; ci != nil {
		for j, p := range ci.prov {
			if ci.fits(j, amount, 0) {
				b.Set(int(p))
			}
		}
	}
	c.mu.Lock()
	if len(c.fit) < maxFitCache {
		c.fit[k] = b
	}
	c.mu.Unlock()
	return b
}

// ClassTable is one resource class's inventories and usages, looked up by
// provider without maps.
type ClassTable struct{ ci *classInv }

// Class returns class's table; a class no provider has gives an empty one.
func (ix *Index) Class(class string) ClassTable { return ClassTable{ix.resIndex().classes[class]} }

// Inventory returns provider p's inventory of the class (normalized, as
// Normalized returns it) and its usage; ok is false without inventory.
func (t ClassTable) Inventory(p int) (inv models.Inventory, used int64, ok bool) {
	if t.ci == nil {
		return models.Inventory{}, 0, false
	}
	j := t.ci.pos[p]
	if j < 0 {
		return models.Inventory{}, 0, false
	}
	return t.ci.inv[j], t.ci.used[j], true
}

// ProvidersWithClass returns the providers having inventory of class, in
// provider order. Do not modify.
func (ix *Index) ProvidersWithClass(class string) []int32 { return ix.resIndex().byClass[class] }

// HasTrees reports whether any provider has a parent.
func (ix *Index) HasTrees() bool { return ix.resIndex().hasTrees }

// HasSharing reports whether any provider shares via aggregates.
func (ix *Index) HasSharing() bool { return ix.sharing.Min() >= 0 }

// WithTrait returns the set of providers carrying trait t. Do not modify.
func (ix *Index) WithTrait(t string) Bitset {
	c := ix.resIndex()
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.byTrait[t]; ok {
		return b
	}
	b := NewBitset(len(ix.providers))
	for i, p := range ix.providers {
		if p.HasTrait(t) {
			b.Set(i)
		}
	}
	c.byTrait[t] = b
	return b
}

// directAggs returns the providers directly in every required term (nil
// when there are none) and those directly in a forbidden aggregate (nil
// when none). ok is false when a required term names only unknown
// aggregates or nothing matches: Placement then finds no provider at all.
func (ix *Index) directAggs(t Terms) (in, bad Bitset, ok bool) {
	for _, term := range t.Required {
		var known []int32
		for _, u := range term {
			if a, found := ix.aggByID[u]; found {
				known = append(known, a)
			}
		}
		if len(known) == 0 {
			return nil, nil, false
		}
		d := ix.union(known)
		if in == nil {
			in = d
		} else {
			in.And(d)
		}
	}
	if in != nil && in.Min() < 0 {
		return nil, nil, false
	}
	var forb []int32
	for _, u := range t.Forbidden {
		if a, found := ix.aggByID[u]; found {
			forb = append(forb, a)
		}
	}
	if len(forb) > 0 {
		bad = ix.union(forb)
	}
	return in, bad, true
}

// classInv is one class's inventories in provider order, so that a scan
// over every provider of the class reads slices, not maps.
type classInv struct {
	prov []int32
	inv  []models.Inventory // normalized
	used []int64
	pos  []int32 // provider → its row, -1 without inventory
	// sharing lists the sharing providers among prov, and belowRoot the
	// roots with a descendant among prov (both on first use).
	sharing   []int32
	belowRoot Bitset
}

// fits is Placement's per-class check on row j with extra usage on top.
func (ci *classInv) fits(j int, amount, extra int64) bool {
	inv := ci.inv[j]
	used := ci.used[j] + extra
	return float64(used+amount) <= float64(inv.Total-inv.Reserved)*inv.AllocationRatio &&
		amount >= inv.MinUnit && amount <= inv.MaxUnit && amount%inv.StepSize == 0
}

// RootsWithClassBelow is the set of roots having a descendant with an
// inventory of class. Do not modify.
func (ix *Index) RootsWithClassBelow(class string) Bitset {
	c := ix.resIndex()
	ci := c.classes[class]
	if ci == nil {
		return NewBitset(len(ix.providers))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ci.belowRoot == nil {
		ci.belowRoot = NewBitset(len(ix.providers))
		for _, p := range ci.prov {
			if ix.parent[p] >= 0 {
				ci.belowRoot.Set(int(ix.root[p]))
			}
		}
	}
	return ci.belowRoot
}

// SharingWithClass lists the sharing providers having inventory of class,
// in provider order. Do not modify.
func (ix *Index) SharingWithClass(class string) []int32 {
	ci := ix.resIndex().classes[class]
	if ci == nil {
		return nil
	}
	return ix.sharingWith(ci)
}

// sharingWith lists the sharing providers having inventory of ci's class.
func (ix *Index) sharingWith(ci *classInv) []int32 {
	c := ix.resIndex()
	c.mu.Lock()
	defer c.mu.Unlock()
	if ci.sharing == nil {
		ci.sharing = []int32{}
		for _, p := range ci.prov {
			if ix.sharing.Has(int(p)) {
				ci.sharing = append(ci.sharing, p)
			}
		}
	}
	return ci.sharing
}

// HasInventories reports whether any provider has an inventory.
func (ix *Index) HasInventories() bool { return len(ix.resIndex().byClass) > 0 }
