package models

import "slices"

// The two memberships of an aggregate (see Aggregate.Members).

// InPlacement reports whether provider is in Placement's aggregate.
func (a *Aggregate) InPlacement(provider string) bool {
	return slices.Contains(a.Members, provider) && !slices.Contains(a.NotInPlacement, provider)
}

// InNova reports whether provider is in Nova's aggregate (as a host's root
// provider, or as any other member corral keeps for both).
func (a *Aggregate) InNova(provider string) bool {
	return slices.Contains(a.Members, provider) && !slices.Contains(a.NotInNova, provider)
}

// Diverges reports whether Nova's and Placement's memberships differ.
func (a *Aggregate) Diverges() bool { return len(a.NotInPlacement)+len(a.NotInNova) > 0 }

// PlacementMembers are the members Placement has.
func (a *Aggregate) PlacementMembers() []string {
	if len(a.NotInPlacement) == 0 {
		return a.Members
	}
	return slices.DeleteFunc(slices.Clone(a.Members), func(p string) bool { return slices.Contains(a.NotInPlacement, p) })
}

// NovaMembers are the members Nova has.
func (a *Aggregate) NovaMembers() []string {
	if len(a.NotInNova) == 0 {
		return a.Members
	}
	return slices.DeleteFunc(slices.Clone(a.Members), func(p string) bool { return slices.Contains(a.NotInNova, p) })
}

// Mirror makes provider's membership the same on both sides, as Nova's
// add_host and remove_host do: corral's own edits never create a drift.
// It also drops from the drift lists any provider no longer a member.
func (a *Aggregate) Mirror(providers ...string) {
	if !a.Diverges() {
		return
	}
	gone := func(p string) bool { return slices.Contains(providers, p) || !slices.Contains(a.Members, p) }
	// Cloned first: the lists may be shared with the world a draft copied.
	a.NotInPlacement = emptyAsNil(slices.DeleteFunc(slices.Clone(a.NotInPlacement), gone))
	a.NotInNova = emptyAsNil(slices.DeleteFunc(slices.Clone(a.NotInNova), gone))
}

func emptyAsNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// checkMemberships checks that the drift lists name members, each once and
// on one side only.
func checkMemberships(a *Aggregate) error {
	seen := map[string]string{}
	for _, side := range []struct {
		field string
		list  []string
	}{{"not_in_placement", a.NotInPlacement}, {"not_in_nova", a.NotInNova}} {
		for _, p := range side.list {
			if !slices.Contains(a.Members, p) {
				return E(Invalid, side.field, "%s is not a member of the aggregate", p)
			}
			if other, dup := seen[p]; dup {
				return E(Invalid, side.field, "%s is listed twice (also in %s)", p, other)
			}
			seen[p] = side.field
		}
	}
	return nil
}
