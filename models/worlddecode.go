package models

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
)

// DecodeWorld reads a world document (FORMATS.md). Names or UUIDs may be
// used in references; missing UUIDs are generated; unknown fields, dangling
// references and duplicates are Invalid errors naming the field path.
func DecodeWorld(r io.Reader) (*World, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, Wrap("decode world", err)
	}
	return DecodeWorldJSON(data, "")
}

// DecodeWorldJSON is DecodeWorld over bytes, with field paths under path
// (e.g. "world" when the world is embedded in a preview document).
// The sections are read in the document's order of references: providers
// (and their allocations), aggregates, flavors, servers, server groups,
// settings; the first error found wins.
func DecodeWorldJSON(data []byte, path string) (*World, error) {
	doc, err := decodeWorldDoc(data, path)
	if err != nil {
		return nil, err
	}
	if doc.Format != "" && doc.Format != WorldFormat {
		return nil, E(Invalid, JoinPath(path, "format"), "unsupported format %q, want %q", doc.Format, WorldFormat)
	}
	dec := newWorldDecoder(doc, path)
	for _, step := range []func() error{
		dec.providers, dec.allocations, dec.aggregates, dec.flavors, dec.servers, dec.serverGroups, dec.settings,
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	// Whatever door the document came through, the same rules answer.
	if err := dec.w.Validate(); err != nil {
		return nil, under(path, err)
	}
	return dec.w, nil
}

// worldDecoder turns a decoded document into a World, one section at a
// time; the reference indexes let later sections name earlier objects.
type worldDecoder struct {
	doc        *typedWorldDoc
	path       string
	w          *World
	given      *Given
	provs      *refIndex
	serverRefs *refIndex
}

func newWorldDecoder(doc *typedWorldDoc, path string) *worldDecoder {
	given := &Given{
		Providers: make([]Fields, len(doc.Providers)), Aggregates: make([]Fields, len(doc.Aggregates)),
		Flavors: make([]Fields, len(doc.Flavors)), Servers: make([]Fields, len(doc.Servers)),
		ServerGroups: make([]Fields, len(doc.ServerGroups)),
	}
	return &worldDecoder{doc: doc, path: path, w: &World{Settings: DefaultSettings(), Given: given}, given: given,
		provs: newRefIndex(len(doc.Providers)), serverRefs: newRefIndex(len(doc.Servers))}
}

// at is the field path of element i of list.
func (dec *worldDecoder) at(list string, i int) string {
	return JoinPath(dec.path, fmt.Sprintf("%s[%d]", list, i))
}

// providers reads the providers in two passes, because a parent may come
// after its child, then fills the roots.
func (dec *worldDecoder) providers() error {
	w := dec.w
	names := map[string]bool{}
	parents := make([]*string, len(dec.doc.Providers))
	w.Providers = make([]Provider, len(dec.doc.Providers))
	for i, d := range dec.doc.Providers {
		p, err := providerFrom(d, dec.at("providers", i), dec.provs, names, i)
		if err != nil {
			return err
		}
		w.Providers[i] = p
		parents[i] = d.Parent.v
		dec.given.Providers[i] = providerFields(d)
	}
	for i, ref := range parents {
		if ref == nil {
			continue
		}
		j, ok := dec.provs.find(*ref)
		if !ok {
			return E(Invalid, dec.at("providers", i)+".parent", "no provider named %q", *ref)
		}
		if j == i {
			return E(Invalid, dec.at("providers", i)+".parent", "a provider cannot be its own parent")
		}
		u := w.Providers[j].UUID
		w.Providers[i].ParentUUID = &u
	}
	return setRoots(w.Providers, dec.path)
}

// allocations adds the consumers' allocations to the providers' usages.
func (dec *worldDecoder) allocations() error {
	consumers, err := addAllocations(dec.w.Providers, dec.given.Providers, dec.doc.Allocations, dec.provs, dec.path)
	if err != nil {
		return err
	}
	dec.w.Consumers = consumers
	return nil
}

func (dec *worldDecoder) aggregates() error {
	aggs := newRefIndex(len(dec.doc.Aggregates))
	aggNames := map[string]bool{}
	for i, d := range dec.doc.Aggregates {
		p := dec.at("aggregates", i)
		if d.Name == "" {
			return E(Invalid, p+".name", "an aggregate needs a name")
		}
		if aggNames[d.Name] {
			return E(Invalid, p+".name", "duplicate aggregate name %q", d.Name)
		}
		aggNames[d.Name] = true
		u, err := uuidOrNew(d.UUID, p+".uuid", aggs.byUUID)
		if err != nil {
			return err
		}
		aggs.byUUID[u] = i
		a, err := dec.aggregateFrom(d, p, i, u)
		if err != nil {
			return err
		}
		dec.w.Aggregates = append(dec.w.Aggregates, a)
	}
	return nil
}

// aggregateFrom builds aggregate i (UUID u) and notes which fields it named.
func (dec *worldDecoder) aggregateFrom(d aggregateDoc, p string, i int, u string) (Aggregate, error) {
	// Metadata the document does not mention stays nil (an empty
	// object is not nil), so that a merge import keeps it.
	a := Aggregate{ID: int64(i + 1), UUID: u, Name: d.Name, AvailabilityZone: d.AvailabilityZone.v, Metadata: d.Metadata}
	if d.AvailabilityZone.given {
		dec.given.Aggregates[i] |= FieldZone
	}
	if d.Metadata != nil {
		dec.given.Aggregates[i] |= FieldMetadata
	}
	if d.Members != nil {
		dec.given.Aggregates[i] |= FieldMembers
	}
	seen := map[string]bool{}
	for j, ref := range d.Members {
		k, ok := dec.provs.find(ref)
		if !ok {
			return Aggregate{}, E(Invalid, fmt.Sprintf("%s.members[%d]", p, j), "no provider named %q", ref)
		}
		mu := dec.w.Providers[k].UUID
		if !seen[mu] {
			seen[mu] = true
			a.Members = append(a.Members, mu)
		}
	}
	if d.Members != nil && a.Members == nil {
		a.Members = []string{} // "members": [] empties; leaving it out keeps them in a merge
	}
	for _, side := range []struct {
		field string
		refs  []string
		dst   *[]string
	}{{"not_in_placement", d.NotInPlacement, &a.NotInPlacement}, {"not_in_nova", d.NotInNova, &a.NotInNova}} {
		for j, ref := range side.refs {
			k, ok := dec.provs.find(ref)
			if !ok {
				return Aggregate{}, E(Invalid, fmt.Sprintf("%s.%s[%d]", p, side.field, j), "no provider named %q", ref)
			}
			*side.dst = append(*side.dst, dec.w.Providers[k].UUID)
		}
	}
	return a, nil
}

func (dec *worldDecoder) flavors() error {
	flavorNames := map[string]bool{}
	flavorIDs := map[string]int{}
	for i, d := range dec.doc.Flavors {
		p := dec.at("flavors", i)
		if d.Name == "" {
			return E(Invalid, p+".name", "a flavor needs a name")
		}
		if flavorNames[d.Name] {
			return E(Invalid, p+".name", "duplicate flavor name %q", d.Name)
		}
		flavorNames[d.Name] = true
		var vcpus, ram, disk, ephemeral, swap int
		for _, n := range []struct {
			v     *int
			to    *int
			field Fields
		}{{d.VCPUs, &vcpus, FieldVCPUs}, {d.RAMMB, &ram, FieldRAMMB}, {d.DiskGB, &disk, FieldDiskGB},
			{d.Ephemeral, &ephemeral, FieldEphemeralGB}, {d.Swap, &swap, FieldSwapMB}} {
			if n.v != nil {
				*n.to = *n.v
				dec.given.Flavors[i] |= n.field
			}
		}
		id := d.ID
		if id == "" {
			id = NewUUID()
		}
		if _, dup := flavorIDs[id]; dup {
			return E(Invalid, p+".id", "duplicate flavor id %q", id)
		}
		flavorIDs[id] = i
		if d.ExtraSpecs != nil {
			dec.given.Flavors[i] |= FieldExtraSpecs
		}
		specs := d.ExtraSpecs
		if specs == nil {
			specs = map[string]string{}
		}
		if err := dec.flavorAccess(d, p, i); err != nil {
			return err
		}
		dec.w.Flavors = append(dec.w.Flavors, Flavor{ID: id, Name: d.Name, VCPUs: vcpus, RAMMB: ram, DiskGB: disk, EphemeralGB: ephemeral, SwapMB: swap, ExtraSpecs: specs,
			Private: d.Private != nil && *d.Private, Projects: slices.Clone(d.Projects)})
	}
	return nil
}

// flavorAccess checks flavor i's privacy and access list and notes which
// of them it named.
func (dec *worldDecoder) flavorAccess(d flavorDoc, p string, i int) error {
	// An access list comes with "private": true, in a merge too.
	if len(d.Projects) > 0 && (d.Private == nil || !*d.Private) {
		return E(Invalid, p+".projects", "only a private flavor has an access list")
	}
	if d.Private != nil {
		dec.given.Flavors[i] |= FieldPrivate
	}
	if d.Projects != nil {
		dec.given.Flavors[i] |= FieldProjects
	}
	projects := map[string]bool{}
	for k, pr := range d.Projects {
		if pr == "" || len(pr) > 255 {
			return E(Invalid, fmt.Sprintf("%s.projects[%d]", p, k), "a project id is 1-255 characters")
		}
		if projects[pr] {
			return E(Invalid, fmt.Sprintf("%s.projects[%d]", p, k), "project %q is listed twice", pr)
		}
		projects[pr] = true
	}
	return nil
}

func (dec *worldDecoder) servers() error {
	w := dec.w
	for i, d := range dec.doc.Servers {
		p := dec.at("servers", i)
		u, err := uuidOrNew(d.UUID, p+".uuid", dec.serverRefs.byUUID)
		if err != nil {
			return err
		}
		dec.serverRefs.byUUID[u] = i
		if str(d.Name) != "" {
			dec.serverRefs.addName(*d.Name, i)
		}
		host := ""
		if str(d.Host) != "" {
			k, ok := dec.provs.find(*d.Host)
			if !ok || !w.Providers[k].IsHost() {
				return E(Invalid, p+".host", "no host named %q", *d.Host)
			}
			host = w.Providers[k].Name
		}
		dec.given.Servers[i] = stringFields(d.Name, FieldName) | stringFields(d.ProjectID, FieldProjectID) |
			stringFields(d.UserID, FieldUserID) | stringFields(d.Host, FieldHost)
		w.Servers = append(w.Servers, Server{UUID: u, Name: str(d.Name), ProjectID: str(d.ProjectID), UserID: str(d.UserID), Host: host})
	}
	return nil
}

func (dec *worldDecoder) serverGroups() error {
	groupUUIDs := map[string]int{}
	for i, d := range dec.doc.ServerGroups {
		p := dec.at("server_groups", i)
		u, err := uuidOrNew(d.UUID, p+".uuid", groupUUIDs)
		if err != nil {
			return err
		}
		groupUUIDs[u] = i
		if perr := checkGroupEntryPolicy(d, p); perr != nil {
			return perr
		}
		dec.given.ServerGroups[i] = stringFields(d.Name, FieldName) | stringFields(d.ProjectID, FieldProjectID) |
			stringFields(d.UserID, FieldUserID) | stringFields(d.Policy, FieldPolicy)
		if d.Rules != nil {
			dec.given.ServerGroups[i] |= FieldRules
		}
		if d.Members != nil {
			dec.given.ServerGroups[i] |= FieldMembers
		}
		g, err := dec.serverGroupFrom(d, p, u)
		if err != nil {
			return err
		}
		dec.w.ServerGroups = append(dec.w.ServerGroups, g)
	}
	return nil
}

// checkGroupEntryPolicy checks the policy and rules a group's entry names. A
// group a merge updates may leave its policy out (the current one stays);
// the store checks the policy and rules it ends with.
func checkGroupEntryPolicy(d groupDoc, p string) error {
	if d.Policy == nil {
		return nil
	}
	switch *d.Policy {
	case PolicyAffinity, PolicyAntiAffinity, PolicySoftAffinity, PolicySoftAntiAffinity:
	default:
		return E(Invalid, p+".policy", "unknown policy %q (want affinity, anti-affinity, soft-affinity or soft-anti-affinity)", *d.Policy)
	}
	if d.Rules != nil {
		if err := CheckGroupRules(*d.Policy, d.Rules); err != nil {
			err.Field = p + "." + err.Field
			return err
		}
	}
	return nil
}

// serverGroupFrom builds a group (UUID u) with its members resolved.
func (dec *worldDecoder) serverGroupFrom(d groupDoc, p, u string) (ServerGroup, error) {
	g := ServerGroup{UUID: u, Name: str(d.Name), ProjectID: str(d.ProjectID), UserID: str(d.UserID), Policy: str(d.Policy), Rules: d.Rules}
	if g.Rules == nil {
		g.Rules = map[string]int{}
	}
	seen := map[string]bool{}
	for j, ref := range d.Members {
		k, ok := dec.serverRefs.find(ref)
		if !ok {
			return ServerGroup{}, E(Invalid, fmt.Sprintf("%s.members[%d]", p, j), "no server named %q", ref)
		}
		su := dec.w.Servers[k].UUID
		if !seen[su] {
			seen[su] = true
			g.Members = append(g.Members, su)
		}
	}
	if g.Members == nil {
		g.Members = []string{}
	}
	return g, nil
}

// settings reads the settings over the defaults and notes which keys the
// document named.
func (dec *worldDecoder) settings() error {
	raw := dec.doc.Settings
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := DecodeStrict(raw, JoinPath(dec.path, "settings"), &dec.w.Settings); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return JSONError(JoinPath(dec.path, "settings"), err)
	}
	for k := range keys {
		dec.given.Settings = append(dec.given.Settings, k)
	}
	sort.Strings(dec.given.Settings)
	return nil
}

func providerFrom(d providerDoc, p string, provs *refIndex, names map[string]bool, i int) (Provider, error) {
	if d.Name == "" {
		return Provider{}, E(Invalid, p+".name", "a provider needs a name")
	}
	if names[d.Name] {
		return Provider{}, E(Invalid, p+".name", "duplicate provider name %q", d.Name)
	}
	names[d.Name] = true
	u, err := uuidOrNew(d.UUID, p+".uuid", provs.byUUID)
	if err != nil {
		return Provider{}, err
	}
	provs.byUUID[u] = i
	provs.addName(d.Name, i)
	traits := d.Traits
	if traits == nil {
		traits = []string{}
	}
	// Inventories and usages the document does not mention stay nil (an
	// empty object is not nil); which fields it named is in World.Given.
	return Provider{UUID: u, Name: d.Name, Traits: traits, Inventories: d.Inventories, Usages: d.Usages, Compute: d.Compute}, nil
}

// providerFields says which optional fields a provider's entry named.
func providerFields(d providerDoc) Fields {
	var f Fields
	if d.Parent.given {
		f |= FieldParent
	}
	if d.Traits != nil {
		f |= FieldTraits
	}
	if d.Inventories != nil {
		f |= FieldInventories
	}
	if d.Usages != nil {
		f |= FieldUsages
	}
	if d.Compute != nil {
		f |= FieldCompute
	}
	return f
}

// stringFields is f when the string field was in the document.
func stringFields(v *string, f Fields) Fields {
	if v == nil {
		return 0
	}
	return f
}

func uuidOrNew(u, field string, seen map[string]int) (string, error) {
	if u == "" {
		return NewUUID(), nil
	}
	if !ValidUUID(u) {
		return "", E(Invalid, field, "%q is not a UUID", u)
	}
	if _, dup := seen[u]; dup {
		return "", E(Invalid, field, "duplicate uuid %q", u)
	}
	return u, nil
}

// setRoots fills RootUUID and rejects parent cycles.
func setRoots(ps []Provider, path string) error {
	idx := make(map[string]int, len(ps))
	for i := range ps {
		idx[ps[i].UUID] = i
	}
	for i := range ps {
		j, steps := i, 0
		for ps[j].ParentUUID != nil {
			j = idx[*ps[j].ParentUUID]
			if steps++; steps > len(ps) {
				return E(Invalid, JoinPath(path, fmt.Sprintf("providers[%d].parent", i)), "parent chain of %q forms a cycle", ps[i].Name)
			}
		}
		ps[i].RootUUID = ps[j].UUID
	}
	return nil
}
