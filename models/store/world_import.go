package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/google/uuid"

	"corral/models"
)

// ImportWorld validates w and applies it in one transaction; any bad record
// fails the whole import and changes nothing. With replace the domain
// objects not in w are removed (users, tokens, quotas and the audit log
// stay). Without it, w's objects are merged in: matched by uuid, or by name
// when the uuid is new to the database (so a hand-written world without
// uuids updates the objects it names instead of clashing with them).
// Settings are applied with replace, or when w carries settings other than
// the defaults (see settingsGiven).
func (s *Store) ImportWorld(ctx context.Context, a Actor, w *models.World, replace bool) error {
	return s.ImportWorldAt(ctx, a, w, replace, -1)
}

// ImportWorldAt is ImportWorld for a change that was previewed at revision
// expect: if any write landed since, it is a Conflict and nothing changes.
// The check runs inside the import's transaction, so no write can slip in
// between. A negative expect checks nothing.
func (s *Store) ImportWorldAt(ctx context.Context, a Actor, w *models.World, replace bool, expect int64) error {
	const op = "store.ImportWorld"
	if w == nil {
		return models.E(models.Invalid, "world", "no world given")
	}
	in := cloneWorld(w)
	if err := checkIncoming(in); err != nil {
		return models.Wrap(op, err)
	}
	return s.write(ctx, a, op, func(t *txn) error {
		if expect >= 0 {
			var rev int64
			if err := t.tx.Raw("SELECT revision FROM corral_revision WHERE id = 1").Scan(&rev).Error; err != nil {
				return err
			}
			if rev != expect+1 { // write has already taken its own step
				return models.E(models.Conflict, "", "the world was changed by someone else since revision %d (now %d) — reload", expect, rev-1)
			}
		}
		cur, err := loadWorld(t.tx)
		if err != nil {
			return err
		}
		return t.importWorld(cur, in, replace)
	})
}

// importWorld applies a checked incoming world on top of cur.
func (t *txn) importWorld(cur, in *models.World, replace bool) error {
	if !replace {
		remapByName(cur, in)
	}
	merged, err := mergeWorld(cur, in, replace)
	if err != nil {
		return err
	}
	if err = validateWorld(merged); err != nil {
		return err
	}
	if err = checkWorldZones(merged); err != nil {
		return err
	}
	curConsumers, err := loadConsumers(t.tx)
	if err != nil {
		return err
	}
	cur.Consumers = curConsumers
	if merged.Consumers, err = mergeConsumers(curConsumers, in.Consumers, replace, merged); err != nil {
		return err
	}
	if !replace {
		settleUsages(cur, in, givenFields(in), merged)
	}
	// Allocations hold on to their providers: they go first and come
	// back after them.
	for _, table := range []string{"allocations", "consumers"} {
		if err = t.tx.Exec("DELETE FROM " + table).Error; err != nil {
			return err
		}
	}
	if err = t.rewriteWorld(cur, in, merged); err != nil {
		return err
	}
	if err = t.insertConsumers(merged.Consumers); err != nil {
		return err
	}
	action := "import"
	if replace {
		action = "import-replace"
	}
	return t.audit(action, "world", "world", "world", worldCounts(cur), worldCounts(merged))
}

func cloneWorld(w *models.World) *models.World {
	c := &models.World{Settings: w.Settings, Given: w.Given.Clone()}
	c.Settings.EnabledFilters = slices.Clone(w.Settings.EnabledFilters)
	for _, p := range w.Providers {
		c.Providers = append(c.Providers, *cloneProvider(&p))
	}
	for _, a := range w.Aggregates {
		cp := cloneAggregate(&a)
		if a.Members == nil {
			cp.Members = nil // not in the file: a merge keeps the current ones
		}
		if a.Metadata == nil {
			cp.Metadata = nil // likewise
		}
		c.Aggregates = append(c.Aggregates, *cp)
	}
	for _, f := range w.Flavors {
		f.ExtraSpecs = maps.Clone(f.ExtraSpecs)
		c.Flavors = append(c.Flavors, f)
	}
	c.Servers = slices.Clone(w.Servers)
	c.Consumers = cloneConsumers(w.Consumers)
	for _, g := range w.ServerGroups {
		g.Rules = maps.Clone(g.Rules)
		g.Members = slices.Clone(g.Members)
		c.ServerGroups = append(c.ServerGroups, g)
	}
	return c
}

// checkIncoming checks an incoming world on its own (models.World.Validate:
// what merging would hide, named by index) and gives new objects their
// uuids. What the world means next to the rows already stored is
// validateWorld's, on the merged world.
func checkIncoming(w *models.World) error {
	if err := w.Validate(); err != nil {
		return err
	}
	for i := range w.Providers {
		fillUUID(&w.Providers[i].UUID)
	}
	for i := range w.Aggregates {
		fillUUID(&w.Aggregates[i].UUID)
	}
	for i := range w.Servers {
		fillUUID(&w.Servers[i].UUID)
	}
	for i := range w.ServerGroups {
		fillUUID(&w.ServerGroups[i].UUID)
	}
	return nil
}

func fillUUID(u *string) {
	if *u == "" {
		*u = uuid.NewString()
	}
}

// remapByName gives an incoming provider, aggregate or flavor whose id the
// database does not know the id of the existing object with its name, and
// rewrites the references to it.
func remapByName(cur, in *models.World) {
	provByUUID, provByName := map[string]bool{}, map[string]string{}
	for _, p := range cur.Providers {
		provByUUID[p.UUID] = true
		provByName[p.Name] = p.UUID
	}
	remap := map[string]string{}
	for i := range in.Providers {
		p := &in.Providers[i]
		if provByUUID[p.UUID] {
			continue
		}
		if old, ok := provByName[strings.TrimSpace(p.Name)]; ok {
			remap[p.UUID] = old
			p.UUID = old
		}
	}
	if len(remap) > 0 {
		for i := range in.Providers {
			if p := in.Providers[i].ParentUUID; p != nil {
				if to, ok := remap[*p]; ok {
					in.Providers[i].ParentUUID = &to
				}
			}
		}
		for i := range in.Aggregates {
			for j, m := range in.Aggregates[i].Members {
				if to, ok := remap[m]; ok {
					in.Aggregates[i].Members[j] = to
				}
			}
		}
		for i := range in.Consumers {
			for j, a := range in.Consumers[i].Allocations {
				if to, ok := remap[a.ProviderUUID]; ok {
					in.Consumers[i].Allocations[j].ProviderUUID = to
				}
			}
		}
	}
	aggByUUID, aggByName := map[string]bool{}, map[string]string{}
	for _, ag := range cur.Aggregates {
		aggByUUID[ag.UUID] = true
		aggByName[ag.Name] = ag.UUID
	}
	for i := range in.Aggregates {
		ag := &in.Aggregates[i]
		if !aggByUUID[ag.UUID] {
			if old, ok := aggByName[strings.TrimSpace(ag.Name)]; ok {
				ag.UUID = old
			}
		}
	}
	flvByID, flvByName := map[string]bool{}, map[string]string{}
	for _, f := range cur.Flavors {
		flvByID[f.ID] = true
		flvByName[f.Name] = f.ID
	}
	for i := range in.Flavors {
		f := &in.Flavors[i]
		if f.ID == "" || !flvByID[f.ID] {
			if old, ok := flvByName[strings.TrimSpace(f.Name)]; ok {
				f.ID = old
			}
		}
	}
}

// settingsGiven tells whether a merged world carries settings of its own,
// for a world that does not say which fields it gives (one not decoded
// from a document): then the defaults (like the zero value) mean "not
// given", so that a partial world does not silently reset the console's
// settings. To reset them, import with replace or save them in the console.
func settingsGiven(st models.Settings) bool {
	return !reflect.DeepEqual(st, models.Settings{}) && !reflect.DeepEqual(st, models.DefaultSettings())
}

// settingsAfterImport are the settings an import of w leaves: w's with
// replace; in a merge, the current ones with each field w's document names
// taken from w (for a world not from a document: w's when settingsGiven).
func settingsAfterImport(cur models.Settings, w *models.World, replace bool) models.Settings {
	if replace {
		return w.Settings
	}
	if w.Given == nil {
		if settingsGiven(w.Settings) {
			return w.Settings
		}
		return cur
	}
	if len(w.Given.Settings) == 0 {
		return cur
	}
	// Field by field through the JSON names, which is how the document
	// named them.
	var fields, incoming map[string]json.RawMessage
	if b, err := json.Marshal(cur); err == nil {
		_ = json.Unmarshal(b, &fields)
	}
	if b, err := json.Marshal(w.Settings); err == nil {
		_ = json.Unmarshal(b, &incoming)
	}
	for _, k := range w.Given.Settings {
		if v, ok := incoming[k]; ok {
			fields[k] = v
		}
	}
	out := cur
	if b, err := json.Marshal(fields); err == nil {
		var st models.Settings
		if json.Unmarshal(b, &st) == nil {
			out = st
		}
	}
	return out
}

// givenFields says which fields each incoming object gives. A world from a
// document says so itself (models.Given); for any other world a nil list
// or map counts as not given, and an aggregate without zone or metadata
// gives neither.
func givenFields(in *models.World) *models.Given {
	if in.Given != nil {
		// One entry per object: an object past the record gives everything.
		fit := func(l []models.Fields, n int) []models.Fields {
			out := make([]models.Fields, n)
			for i := range out {
				out[i] = models.AllFields
				if i < len(l) {
					out[i] = l[i]
				}
			}
			return out
		}
		g := in.Given
		return &models.Given{
			Providers: fit(g.Providers, len(in.Providers)), Aggregates: fit(g.Aggregates, len(in.Aggregates)),
			Flavors: fit(g.Flavors, len(in.Flavors)), Servers: fit(g.Servers, len(in.Servers)),
			ServerGroups: fit(g.ServerGroups, len(in.ServerGroups)), Settings: g.Settings,
		}
	}
	g := &models.Given{}
	listed := func(isNil bool, f models.Fields) models.Fields {
		if isNil {
			return 0
		}
		return f
	}
	for _, p := range in.Providers {
		g.Providers = append(g.Providers, models.AllFields&^(models.FieldTraits|models.FieldInventories|models.FieldUsages|models.FieldAllocated)|
			listed(p.Traits == nil, models.FieldTraits)|listed(p.Inventories == nil, models.FieldInventories)|listed(p.Usages == nil, models.FieldUsages))
	}
	for _, a := range in.Aggregates {
		f := models.AllFields &^ (models.FieldZone | models.FieldMetadata | models.FieldMembers)
		f |= listed(a.Metadata == nil, models.FieldMetadata) | listed(a.Members == nil, models.FieldMembers)
		f |= listed(a.Metadata == nil && a.AvailabilityZone == nil, models.FieldZone)
		g.Aggregates = append(g.Aggregates, f)
	}
	for _, fl := range in.Flavors {
		g.Flavors = append(g.Flavors, models.AllFields&^models.FieldExtraSpecs|listed(fl.ExtraSpecs == nil, models.FieldExtraSpecs))
	}
	for range in.Servers {
		g.Servers = append(g.Servers, models.AllFields)
	}
	for _, sg := range in.ServerGroups {
		g.ServerGroups = append(g.ServerGroups, models.AllFields&^(models.FieldRules|models.FieldMembers)|
			listed(sg.Rules == nil, models.FieldRules)|listed(sg.Members == nil, models.FieldMembers))
	}
	return g
}

// mergeWorld returns the world after the import: the incoming objects, plus
// (unless replace) the current objects the import does not mention, and
// for the objects it does mention the current value of every field their
// entries leave out (keepUnmentioned).
func mergeWorld(cur, in *models.World, replace bool) (*models.World, error) {
	m := &models.World{Settings: settingsAfterImport(cur.Settings, in, replace)}
	m.Providers = slices.Clone(in.Providers)
	m.Aggregates = slices.Clone(in.Aggregates)
	m.Servers = slices.Clone(in.Servers)
	m.ServerGroups = slices.Clone(in.ServerGroups)
	m.Flavors = slices.Clone(in.Flavors)
	for i := range m.Flavors {
		if m.Flavors[i].ID == "" {
			m.Flavors[i].ID = uuid.NewString()
			in.Flavors[i].ID = m.Flavors[i].ID
		}
	}
	if replace {
		return m, nil
	}
	if err := keepUnmentioned(cur, givenFields(in), m); err != nil {
		return nil, err
	}
	has := map[string]bool{}
	for _, p := range in.Providers {
		has["p"+p.UUID] = true
	}
	for _, a := range in.Aggregates {
		has["a"+a.UUID] = true
	}
	for _, f := range in.Flavors {
		has["f"+f.ID] = true
	}
	for _, s := range in.Servers {
		has["s"+s.UUID] = true
	}
	for _, g := range in.ServerGroups {
		has["g"+g.UUID] = true
	}
	for _, p := range cur.Providers {
		if !has["p"+p.UUID] {
			m.Providers = append(m.Providers, p)
		}
	}
	for _, a := range cur.Aggregates {
		if !has["a"+a.UUID] {
			m.Aggregates = append(m.Aggregates, a)
		}
	}
	for _, f := range cur.Flavors {
		if !has["f"+f.ID] {
			m.Flavors = append(m.Flavors, f)
		}
	}
	for _, s := range cur.Servers {
		if !has["s"+s.UUID] {
			m.Servers = append(m.Servers, s)
		}
	}
	for _, g := range cur.ServerGroups {
		if !has["g"+g.UUID] {
			m.ServerGroups = append(m.ServerGroups, g)
		}
	}
	return m, nil
}

// withKept is a map an entry did not give: the current one, plus what the
// import itself added to it (Blazar's translation adds reservation tags
// to metadata and extra specs the file left out).
func withKept(cur, added map[string]string) map[string]string {
	out := maps.Clone(cur)
	if len(added) > 0 && out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, added)
	return out
}

// keepUnmentioned merges field by field: an incoming object that is
// already there keeps the current value of every field its entry leaves
// out (given says which it names; m's first objects are the incoming ones,
// in order). What cannot be merged is refused, naming the object and field.
func keepUnmentioned(cur *models.World, given *models.Given, m *models.World) error {
	keepProviderFields(cur, given, m)
	keepAggregateFields(cur, given, m)
	keepFlavorFields(cur, given, m)
	keepServerFields(cur, given, m)
	return keepGroupFields(cur, given, m)
}

func keepProviderFields(cur *models.World, given *models.Given, m *models.World) {
	provs := make(map[string]*models.Provider, len(cur.Providers))
	for i := range cur.Providers {
		provs[cur.Providers[i].UUID] = &cur.Providers[i]
	}
	for i := range given.Providers {
		p, old := &m.Providers[i], provs[m.Providers[i].UUID]
		if old == nil {
			continue
		}
		f := given.Providers[i]
		if !f.Has(models.FieldParent) {
			p.ParentUUID = nil
			if old.ParentUUID != nil {
				v := *old.ParentUUID
				p.ParentUUID = &v
			}
		}
		if !f.Has(models.FieldTraits) || p.Traits == nil {
			p.Traits = slices.Clone(old.Traits)
		}
		if !f.Has(models.FieldInventories) || p.Inventories == nil {
			p.Inventories = maps.Clone(old.Inventories)
		}
		if !f.Has(models.FieldCompute) {
			p.Compute = cloneService(old.Compute)
		}
		// Usages are settled once the consumers are merged (settleUsages).
	}
}

func keepAggregateFields(cur *models.World, given *models.Given, m *models.World) {
	aggs := make(map[string]*models.Aggregate, len(cur.Aggregates))
	for i := range cur.Aggregates {
		aggs[cur.Aggregates[i].UUID] = &cur.Aggregates[i]
	}
	for i := range given.Aggregates {
		a, old := &m.Aggregates[i], aggs[m.Aggregates[i].UUID]
		if old == nil {
			continue
		}
		f := given.Aggregates[i]
		if !f.Has(models.FieldMembers) || a.Members == nil {
			a.Members = slices.Clone(old.Members)
			a.NotInPlacement, a.NotInNova = slices.Clone(old.NotInPlacement), slices.Clone(old.NotInNova)
		}
		// The zone lives in the metadata too (Nova's availability_zone
		// key). Metadata that is given is the whole metadata, zone
		// included unless the zone field says otherwise; metadata left out
		// is kept, with the zone field applied to it when given.
		if f.Has(models.FieldMetadata) && a.Metadata != nil {
			continue
		}
		a.Metadata = withKept(old.Metadata, a.Metadata)
		if f.Has(models.FieldZone) {
			if a.AvailabilityZone == nil {
				delete(a.Metadata, azKey)
			}
			continue
		}
		a.AvailabilityZone = nil
		if old.AvailabilityZone != nil {
			z := *old.AvailabilityZone
			a.AvailabilityZone = &z
		}
	}
}

func keepFlavorFields(cur *models.World, given *models.Given, m *models.World) {
	flavors := make(map[string]*models.Flavor, len(cur.Flavors))
	for i := range cur.Flavors {
		flavors[cur.Flavors[i].ID] = &cur.Flavors[i]
	}
	for i := range given.Flavors {
		fl, old := &m.Flavors[i], flavors[m.Flavors[i].ID]
		if old == nil {
			continue
		}
		f := given.Flavors[i]
		if !f.Has(models.FieldVCPUs) {
			fl.VCPUs = old.VCPUs
		}
		if !f.Has(models.FieldRAMMB) {
			fl.RAMMB = old.RAMMB
		}
		if !f.Has(models.FieldDiskGB) {
			fl.DiskGB = old.DiskGB
		}
		if !f.Has(models.FieldEphemeralGB) {
			fl.EphemeralGB = old.EphemeralGB
		}
		if !f.Has(models.FieldSwapMB) {
			fl.SwapMB = old.SwapMB
		}
		if !f.Has(models.FieldPrivate) {
			fl.Private = old.Private
		}
		if !f.Has(models.FieldProjects) {
			fl.Projects = slices.Clone(old.Projects)
		}
		if !f.Has(models.FieldExtraSpecs) || fl.ExtraSpecs == nil {
			fl.ExtraSpecs = withKept(old.ExtraSpecs, fl.ExtraSpecs)
		}
	}
}

func keepServerFields(cur *models.World, given *models.Given, m *models.World) {
	servers := make(map[string]*models.Server, len(cur.Servers))
	for i := range cur.Servers {
		servers[cur.Servers[i].UUID] = &cur.Servers[i]
	}
	for i := range given.Servers {
		sv, old := &m.Servers[i], servers[m.Servers[i].UUID]
		if old == nil {
			continue
		}
		f := given.Servers[i]
		keepString(f, models.FieldName, &sv.Name, old.Name)
		keepString(f, models.FieldProjectID, &sv.ProjectID, old.ProjectID)
		keepString(f, models.FieldUserID, &sv.UserID, old.UserID)
		keepString(f, models.FieldHost, &sv.Host, old.Host)
	}
}

// keepGroupFields refuses a new policy without rules while the current
// rules belong to the old policy.
func keepGroupFields(cur *models.World, given *models.Given, m *models.World) error {
	groups := make(map[string]*models.ServerGroup, len(cur.ServerGroups))
	for i := range cur.ServerGroups {
		groups[cur.ServerGroups[i].UUID] = &cur.ServerGroups[i]
	}
	for i := range given.ServerGroups {
		g, old := &m.ServerGroups[i], groups[m.ServerGroups[i].UUID]
		if old == nil {
			continue
		}
		f := given.ServerGroups[i]
		keepString(f, models.FieldName, &g.Name, old.Name)
		keepString(f, models.FieldProjectID, &g.ProjectID, old.ProjectID)
		keepString(f, models.FieldUserID, &g.UserID, old.UserID)
		keepString(f, models.FieldPolicy, &g.Policy, old.Policy)
		if !f.Has(models.FieldRules) || g.Rules == nil {
			if f.Has(models.FieldPolicy) && g.Policy != old.Policy && len(old.Rules) > 0 {
				return models.E(models.Invalid, fmt.Sprintf("server_groups[%s].rules", g.Name),
					"the policy changes from %s to %s but the entry gives no rules, and the current rules belong to %s: give \"rules\" (an empty object for none)", old.Policy, g.Policy, old.Policy)
			}
			g.Rules = maps.Clone(old.Rules)
		}
		if !f.Has(models.FieldMembers) || g.Members == nil {
			g.Members = slices.Clone(old.Members)
		}
	}
	return nil
}

// settleUsages gives each provider of a merged world the usage its
// consumers' allocations add up to, on top of what it uses beyond them:
// the entry's usages when it gives them (less the file's allocations,
// which the decoder added in), else the provider's current usage less its
// current consumers' allocations. So a merge that lists consumers neither
// counts them twice nor drops the allocations of the consumers it keeps.
func settleUsages(cur, in *models.World, given *models.Given, merged *models.World) {
	sum := func(cs []models.Consumer) map[string]map[string]int64 {
		out := map[string]map[string]int64{}
		for _, c := range cs {
			for _, a := range c.Allocations {
				if out[a.ProviderUUID] == nil {
					out[a.ProviderUUID] = map[string]int64{}
				}
				out[a.ProviderUUID][a.ResourceClass] += a.Used
			}
		}
		return out
	}
	// minus is a-b without the classes that come to nothing.
	minus := func(a, b map[string]int64) map[string]int64 {
		out := map[string]int64{}
		for rc, n := range a {
			if n -= b[rc]; n > 0 {
				out[rc] = n
			}
		}
		return out
	}
	curAlloc, inAlloc, mergedAlloc := sum(cur.Consumers), sum(in.Consumers), sum(merged.Consumers)
	curUsage := make(map[string]map[string]int64, len(cur.Providers))
	for _, p := range cur.Providers {
		curUsage[p.UUID] = p.Usages
	}
	for i := range merged.Providers {
		p := &merged.Providers[i]
		old, exists := curUsage[p.UUID]
		keepOld := exists && (i >= len(given.Providers) || !given.Providers[i].Has(models.FieldUsages))
		if len(curAlloc[p.UUID])+len(inAlloc[p.UUID])+len(mergedAlloc[p.UUID]) == 0 {
			// No consumer here: the usages are the entry's or the current ones, as they are.
			if keepOld {
				p.Usages = maps.Clone(old)
			}
			continue
		}
		beyond := minus(p.Usages, inAlloc[p.UUID])
		if keepOld {
			beyond = minus(old, curAlloc[p.UUID])
		}
		for rc, n := range mergedAlloc[p.UUID] {
			beyond[rc] += n
		}
		if len(beyond) == 0 && len(p.Usages) == 0 {
			continue // keep nil or empty as it was
		}
		p.Usages = beyond
	}
}

// keepString sets *v to old unless f gives field.
func keepString(f, field models.Fields, v *string, old string) {
	if !f.Has(field) {
		*v = old
	}
}
