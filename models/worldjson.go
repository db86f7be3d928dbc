package models

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// WorldFormat is the value of the world document's "format" field.
const WorldFormat = "corral.world/v1"

// The JSON shapes of FORMATS.md. References are names or UUIDs on input;
// on output they are UUIDs (a server's host is the host's name).
type (
	worldDoc struct {
		Format       string            `json:"format"`
		Providers    []json.RawMessage `json:"providers"`
		Aggregates   []json.RawMessage `json:"aggregates"`
		Flavors      []json.RawMessage `json:"flavors"`
		Servers      []json.RawMessage `json:"servers"`
		ServerGroups []json.RawMessage `json:"server_groups"`
		Settings     json.RawMessage   `json:"settings"`
		Allocations  []json.RawMessage `json:"allocations"`
	}
	// typedWorldDoc is the fast path: the whole document in one pass.
	typedWorldDoc struct {
		Format       string          `json:"format"`
		Providers    []providerDoc   `json:"providers"`
		Aggregates   []aggregateDoc  `json:"aggregates"`
		Flavors      []flavorDoc     `json:"flavors"`
		Servers      []serverDoc     `json:"servers"`
		ServerGroups []groupDoc      `json:"server_groups"`
		Settings     json.RawMessage `json:"settings"`
		Allocations  []allocationDoc `json:"allocations"`
	}
	// allocationDoc is one consumer's allocations (Placement's shape, keyed
	// by provider name or uuid); on input they add to the providers'
	// usages, which is all the core reads of them, and become the world's
	// Consumers.
	allocationDoc struct {
		Consumer           string                      `json:"consumer"`
		ProjectID          string                      `json:"project_id"`
		UserID             string                      `json:"user_id"`
		ConsumerType       string                      `json:"consumer_type,omitempty"`
		ConsumerGeneration *int64                      `json:"consumer_generation,omitempty"`
		Resources          map[string]map[string]int64 `json:"resources"`
	}
	providerDoc struct {
		UUID        string               `json:"uuid"`
		Name        string               `json:"name"`
		Parent      optString            `json:"parent"`
		Traits      []string             `json:"traits"`
		Inventories map[string]Inventory `json:"inventories,omitempty"`
		Usages      map[string]int64     `json:"usages,omitempty"`
		// The host's nova-compute service (Provider.Compute).
		Compute *ComputeHost `json:"compute,omitempty"`
	}
	aggregateDoc struct {
		UUID             string            `json:"uuid"`
		Name             string            `json:"name"`
		AvailabilityZone optString         `json:"availability_zone"`
		Metadata         map[string]string `json:"metadata"`
		Members          []string          `json:"members"`
		// The members only one side has (see Aggregate.NotInPlacement).
		NotInPlacement []string `json:"not_in_placement,omitempty"`
		NotInNova      []string `json:"not_in_nova,omitempty"`
	}
	flavorDoc struct {
		ID         string            `json:"id,omitempty"`
		Name       string            `json:"name"`
		VCPUs      *int              `json:"vcpus"`
		RAMMB      *int              `json:"ram_mb"`
		DiskGB     *int              `json:"disk_gb"`
		Ephemeral  *int              `json:"ephemeral_gb,omitempty"`
		Swap       *int              `json:"swap_mb,omitempty"`
		ExtraSpecs map[string]string `json:"extra_specs"`
		Private    *bool             `json:"private,omitempty"`
		Projects   []string          `json:"projects,omitempty"`
	}
	serverDoc struct {
		UUID      string  `json:"uuid"`
		Name      *string `json:"name"`
		ProjectID *string `json:"project_id"`
		UserID    *string `json:"user_id,omitempty"`
		Host      *string `json:"host"`
	}
	groupDoc struct {
		UUID      string         `json:"uuid"`
		Name      *string        `json:"name"`
		ProjectID *string        `json:"project_id"`
		UserID    *string        `json:"user_id"`
		Policy    *string        `json:"policy"`
		Rules     map[string]int `json:"rules"`
		Members   []string       `json:"members"`
	}
)

// optString is a string field where null means "none" (a root
// provider's parent, an aggregate without a zone) and leaving the field out
// means "not given", which a merge import must tell apart.
type optString struct {
	given bool
	v     *string
}

func (o *optString) UnmarshalJSON(b []byte) error {
	o.given = true
	if string(b) == "null" {
		o.v = nil
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.v = &v
	return nil
}

func (o optString) MarshalJSON() ([]byte, error) { return json.Marshal(o.v) }

func someString(s *string) optString { return optString{given: true, v: s} }

// str is *p, or "" when p is nil.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// DecodeStrict decodes one JSON value into v, rejecting unknown fields and
// trailing data. Errors are Invalid and name the field path under path
// (e.g. "providers[2].inventories").
func DecodeStrict(raw []byte, path string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return JSONError(path, err)
	}
	if dec.More() {
		return E(Invalid, path, "unexpected data after the JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return E(Invalid, path, "unexpected data after the JSON value")
	}
	return nil
}

// JSONError turns an encoding/json error into an Invalid error naming the
// field path (joined under path).
func JSONError(path string, err error) error {
	var ute *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &ute):
		return E(Invalid, JoinPath(path, ute.Field), "expected %s, got %s", jsonType(ute.Type.String()), ute.Value)
	case errors.As(err, &se):
		return E(Invalid, path, "malformed JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.EOF):
		return E(Invalid, path, "empty document")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return E(Invalid, path, "truncated JSON")
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return E(Invalid, JoinPath(path, strings.Trim(name, `"`)), "unknown field")
	}
	return E(Invalid, path, "%s", strings.TrimPrefix(msg, "json: "))
}

func jsonType(t string) string {
	switch {
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "struct"), strings.HasPrefix(t, "models."), strings.Contains(t, "Doc"):
		return "an object"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "float"), strings.HasPrefix(t, "uint"):
		return "a number"
	case t == "string", t == "*string":
		return "a string"
	case t == "bool", t == "*bool":
		return "true or false"
	}
	return t
}

// JoinPath joins a field path and a child ("a" + "b" = "a.b").
func JoinPath(path, child string) string {
	switch {
	case child == "":
		return path
	case path == "":
		return child
	case strings.HasPrefix(child, "["):
		return path + child
	}
	return path + "." + child
}

// NewUUID returns a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // unreachable on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// NameUUID returns the name-based (version 5, SHA-1) UUID of name in the
// URL namespace: the same name always gives the same UUID.
func NameUUID(name string) string {
	// RFC 4122's URL namespace, 6ba7b811-9dad-11d1-80b4-00c04fd430c8.
	ns := [16]byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	h := sha1.New()
	h.Write(ns[:])
	h.Write([]byte(name))
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ValidUUID reports whether s is a UUID in 8-4-4-4-12 hex form.
func ValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// decodeWorldDoc decodes the document in one pass; only when that fails
// does it decode element by element, so that the error names the element
// ("providers[41].colour") — encoding/json alone does not say which.
func decodeWorldDoc(data []byte, path string) (*typedWorldDoc, error) {
	var doc typedWorldDoc
	fastErr := DecodeStrict(data, path, &doc)
	if fastErr == nil {
		return &doc, nil
	}
	var raw worldDoc
	if err := DecodeStrict(data, path, &raw); err != nil {
		return nil, err
	}
	lists := []struct {
		name  string
		items []json.RawMessage
		elem  func() any
	}{
		{"providers", raw.Providers, func() any { return new(providerDoc) }},
		{"aggregates", raw.Aggregates, func() any { return new(aggregateDoc) }},
		{"flavors", raw.Flavors, func() any { return new(flavorDoc) }},
		{"servers", raw.Servers, func() any { return new(serverDoc) }},
		{"server_groups", raw.ServerGroups, func() any { return new(groupDoc) }},
		{"allocations", raw.Allocations, func() any { return new(allocationDoc) }},
	}
	for _, l := range lists {
		for i, item := range l.items {
			if err := DecodeStrict(item, JoinPath(path, fmt.Sprintf("%s[%d]", l.name, i)), l.elem()); err != nil {
				return nil, err
			}
		}
	}
	return nil, fastErr
}

// refIndex resolves references by UUID first, then by name.
type refIndex struct {
	byUUID map[string]int
	byName map[string]int // -1 when the name is ambiguous
}

func newRefIndex(n int) *refIndex {
	return &refIndex{byUUID: make(map[string]int, n), byName: make(map[string]int, n)}
}

func (r *refIndex) addName(name string, i int) {
	if _, dup := r.byName[name]; dup {
		r.byName[name] = -1
		return
	}
	r.byName[name] = i
}

func (r *refIndex) find(ref string) (int, bool) {
	if i, ok := r.byUUID[ref]; ok {
		return i, true
	}
	i, ok := r.byName[ref]
	return i, ok && i >= 0
}

// EncodeWorld writes world as a world document. References are written as
// UUIDs, so the output decodes back to the same world.
func EncodeWorld(w io.Writer, world *World) error {
	doc := struct {
		Format       string         `json:"format"`
		Providers    []providerDoc  `json:"providers"`
		Aggregates   []aggregateDoc `json:"aggregates"`
		Flavors      []flavorDoc    `json:"flavors"`
		Servers      []serverDoc    `json:"servers"`
		ServerGroups []groupDoc     `json:"server_groups"`
		Settings     Settings       `json:"settings"`
		// Placement's consumers, when there are any.
		Allocations []allocationDoc `json:"allocations,omitempty"`
	}{
		Format:       WorldFormat,
		Providers:    make([]providerDoc, 0, len(world.Providers)),
		Aggregates:   make([]aggregateDoc, 0, len(world.Aggregates)),
		Flavors:      make([]flavorDoc, 0, len(world.Flavors)),
		Servers:      make([]serverDoc, 0, len(world.Servers)),
		ServerGroups: make([]groupDoc, 0, len(world.ServerGroups)),
		Settings:     world.Settings,
	}
	allocs, beyond := allocationDocs(world)
	if len(allocs) > 0 {
		doc.Allocations = allocs
	}
	for _, p := range world.Providers {
		traits := p.Traits
		if traits == nil {
			traits = []string{}
		}
		usages := p.Usages
		if rest, ok := beyond[p.UUID]; ok {
			usages = rest
		}
		doc.Providers = append(doc.Providers, providerDoc{UUID: p.UUID, Name: p.Name, Parent: someString(p.ParentUUID),
			Traits: traits, Inventories: p.Inventories, Usages: usages, Compute: p.Compute})
	}
	for _, a := range world.Aggregates {
		md, members := a.Metadata, a.Members
		if md == nil {
			md = map[string]string{}
		}
		if members == nil {
			members = []string{}
		}
		doc.Aggregates = append(doc.Aggregates, aggregateDoc{UUID: a.UUID, Name: a.Name,
			AvailabilityZone: someString(a.AvailabilityZone), Metadata: md, Members: members,
			NotInPlacement: a.NotInPlacement, NotInNova: a.NotInNova})
	}
	for _, f := range world.Flavors {
		specs := f.ExtraSpecs
		if specs == nil {
			specs = map[string]string{}
		}
		var private *bool
		if f.Private {
			private = &f.Private
		}
		doc.Flavors = append(doc.Flavors, flavorDoc{ID: f.ID, Name: f.Name, VCPUs: &f.VCPUs, RAMMB: &f.RAMMB, DiskGB: &f.DiskGB, ExtraSpecs: specs,
			Private: private, Projects: f.Projects, Ephemeral: nonZero(f.EphemeralGB), Swap: nonZero(f.SwapMB)})
	}
	for _, s := range world.Servers {
		var user *string
		if s.UserID != "" {
			user = &s.UserID
		}
		doc.Servers = append(doc.Servers, serverDoc{UUID: s.UUID, Name: &s.Name, ProjectID: &s.ProjectID, UserID: user, Host: &s.Host})
	}
	for _, g := range world.ServerGroups {
		rules, members := g.Rules, g.Members
		if rules == nil {
			rules = map[string]int{}
		}
		if members == nil {
			members = []string{}
		}
		var policy *string // a merge file's group may have none yet: null, which decodes back to none
		if g.Policy != "" {
			policy = &g.Policy
		}
		doc.ServerGroups = append(doc.ServerGroups, groupDoc{UUID: g.UUID, Name: &g.Name, ProjectID: &g.ProjectID,
			UserID: &g.UserID, Policy: policy, Rules: rules, Members: members})
	}
	if doc.Settings.EnabledFilters == nil {
		doc.Settings.EnabledFilters = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// addAllocations adds each consumer's allocations to its providers'
// usages and returns the consumers, ordered by UUID; given records
// which providers the allocations name.
func addAllocations(ps []Provider, given []Fields, allocs []allocationDoc, provs *refIndex, path string) ([]Consumer, error) {
	copied := make([]bool, len(ps))
	consumers := make([]Consumer, 0, len(allocs))
	seen := map[string]int{}
	for i, a := range allocs {
		at := JoinPath(path, fmt.Sprintf("allocations[%d]", i))
		if a.Consumer == "" {
			return nil, E(Invalid, at+".consumer", "an allocation needs its consumer")
		}
		// Placement's consumers are UUIDs; a hand-written world may name
		// them instead ("web-1"), which stands for that name's UUID.
		id := strings.ToLower(a.Consumer)
		if !ValidUUID(id) {
			id = NameUUID("consumer:" + a.Consumer)
		}
		if _, dup := seen[id]; dup {
			return nil, E(Invalid, at+".consumer", "consumer %q is listed twice", a.Consumer)
		}
		seen[id] = i
		for field, v := range map[string]string{"project_id": a.ProjectID, "user_id": a.UserID, "consumer_type": a.ConsumerType} {
			if len(v) > 255 {
				return nil, E(Invalid, at+"."+field, "at most 255 characters, got %d", len(v))
			}
		}
		c := Consumer{UUID: id, ProjectID: a.ProjectID, UserID: a.UserID, ConsumerType: a.ConsumerType}
		if g := a.ConsumerGeneration; g != nil {
			if *g < 1 {
				return nil, E(Invalid, at+".consumer_generation", "a consumer's generation is at least 1, got %d", *g)
			}
			c.Generation = *g
		}
		refs := make([]string, 0, len(a.Resources))
		for ref := range a.Resources {
			refs = append(refs, ref)
		}
		sort.Strings(refs)
		for _, ref := range refs {
			j, ok := provs.find(ref)
			if !ok {
				return nil, E(Invalid, at+".resources", "no provider named %q", ref)
			}
			if !copied[j] {
				copied[j] = true
				given[j] |= FieldAllocated
				u := make(map[string]int64, len(ps[j].Usages))
				for k, v := range ps[j].Usages {
					u[k] = v
				}
				ps[j].Usages = u
			}
			classes := make([]string, 0, len(a.Resources[ref]))
			for rc := range a.Resources[ref] {
				classes = append(classes, rc)
			}
			sort.Strings(classes)
			for _, rc := range classes {
				n := a.Resources[ref][rc]
				if rc == "" || n < 1 {
					return nil, E(Invalid, at+".resources."+ref, "class %q: an amount is at least 1, got %d", rc, n)
				}
				ps[j].Usages[rc] += n
				c.Allocations = append(c.Allocations, Allocation{ConsumerUUID: c.UUID, ProviderUUID: ps[j].UUID, ResourceClass: rc, Used: n})
			}
		}
		if len(c.Allocations) == 0 {
			return nil, E(Invalid, at+".resources", "consumer %q allocates nothing", a.Consumer)
		}
		sortAllocations(c.Allocations)
		consumers = append(consumers, c)
	}
	sort.Slice(consumers, func(i, j int) bool { return consumers[i].UUID < consumers[j].UUID })
	return consumers, nil
}

// sortAllocations orders a consumer's allocations by provider, then class.
func sortAllocations(as []Allocation) {
	sort.Slice(as, func(i, j int) bool {
		if as[i].ProviderUUID != as[j].ProviderUUID {
			return as[i].ProviderUUID < as[j].ProviderUUID
		}
		return as[i].ResourceClass < as[j].ResourceClass
	})
}

// allocationDocs writes consumers in the document's shape, and the usages
// each provider has beyond its allocations: what a provider's "usages"
// says in a document that also lists allocations, as decoding adds the
// two.
func allocationDocs(world *World) ([]allocationDoc, map[string]map[string]int64) {
	docs := make([]allocationDoc, 0, len(world.Consumers))
	allocated := map[string]map[string]int64{}
	for _, c := range world.Consumers {
		d := allocationDoc{Consumer: c.UUID, ProjectID: c.ProjectID, UserID: c.UserID, ConsumerType: c.ConsumerType,
			Resources: map[string]map[string]int64{}}
		if c.Generation > 0 {
			g := c.Generation
			d.ConsumerGeneration = &g
		}
		for _, a := range c.Allocations {
			if d.Resources[a.ProviderUUID] == nil {
				d.Resources[a.ProviderUUID] = map[string]int64{}
			}
			d.Resources[a.ProviderUUID][a.ResourceClass] += a.Used
			if allocated[a.ProviderUUID] == nil {
				allocated[a.ProviderUUID] = map[string]int64{}
			}
			allocated[a.ProviderUUID][a.ResourceClass] += a.Used
		}
		docs = append(docs, d)
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].Consumer < docs[j].Consumer })
	beyond := make(map[string]map[string]int64, len(allocated))
	for _, p := range world.Providers {
		al, ok := allocated[p.UUID]
		if !ok {
			continue
		}
		rest := map[string]int64{}
		for rc, n := range p.Usages {
			// A class the allocations cover comes back from them; any other
			// entry (even 0) is written as it is.
			if left := n - al[rc]; left > 0 || (left == 0 && al[rc] == 0) {
				rest[rc] = left
			}
		}
		beyond[p.UUID] = rest
	}
	return docs, beyond
}

// nonZero points at n, or is nil for 0 (a field the format leaves out).
func nonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
