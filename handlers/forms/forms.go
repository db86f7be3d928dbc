// Package forms reads the console's forms that write: each reader turns
// what a form posts (url.Values) and the live snapshot into the changes it
// makes ([]scheduling.Change) with a title, or the messages that refuse it.
// The save handlers (handlers/console), the inline impact and "Stage as
// draft" (handlers/query) call the same reader, so that what an admin
// previews is what is saved. Readers are pure: no HTTP, no store.
//
// One file per page area: aggregates.go (create, name and zone, metadata,
// tags, members, delete), flavors.go (create, edit, delete), servergroups.go
// (create, members, delete) and providers.go (traits, inventories).
package forms

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"corral/models"
	"corral/models/scheduling"
)

// Read is what a form asks for.
type Read struct {
	// Title names the changes ("Members of ssd"), for a staged draft.
	Title   string
	Changes []scheduling.Change
	// Errors refuse the form, by field ("" for the form as a whole).
	Errors map[string]string
	// Problems are the findings of a key/value editor (metadata, extra
	// specs), errors and warnings, in the editor's order.
	Problems []Problem
	// Confirm holds acknowledgements the save still needs (a zone change),
	// by field: they do not stop a preview or a draft.
	Confirm map[string]string
	// Skipped names what the form named that changes nothing (providers
	// that are members already).
	Skipped []string
}

// Problem is one finding of a key/value editor; Key is "" for the editor
// as a whole.
type Problem struct {
	Key, Message string
	Warning      bool
}

// Refused reports whether the form cannot be saved as posted (its
// acknowledgements aside).
func (r *Read) Refused() bool {
	return len(r.Errors) > 0 || slices.ContainsFunc(r.Problems, func(p Problem) bool { return !p.Warning })
}

// Err is the first refusal as an Invalid error naming its field, nil when
// the form can be saved.
func (r *Read) Err() error {
	for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
		return models.E(models.Invalid, k, "%s", strings.TrimSuffix(r.Errors[k], "."))
	}
	for _, p := range r.Problems {
		if !p.Warning {
			field := "key"
			if p.Key != "" {
				field = "key " + p.Key
			}
			return models.E(models.Invalid, field, "%s", strings.TrimSuffix(p.Message, "."))
		}
	}
	return nil
}

// FirstError is the message of the first refusal, as the page shows it;
// "" when the form can be saved.
func (r *Read) FirstError() string {
	for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
		return r.Errors[k]
	}
	for _, p := range r.Problems {
		if !p.Warning {
			return p.Message
		}
	}
	return ""
}

func (r *Read) refuse(field, msg string) {
	if r.Errors == nil {
		r.Errors = map[string]string{}
	}
	if _, ok := r.Errors[field]; !ok {
		r.Errors[field] = msg
	}
}

func (r *Read) add(c scheduling.Change) { r.Changes = append(r.Changes, c) }

// TypedOn is the generation of the edited object a form was rendered from
// (its "generation" field), nil when the form has none or a malformed one.
func TypedOn(form url.Values) *int64 {
	g, err := strconv.ParseInt(strings.TrimSpace(form.Get("generation")), 10, 64)
	if err != nil || g < 0 {
		return nil
	}
	return &g
}

// stamped puts the generation the form was typed on onto every change,
// which all name the edited object: the write path refuses them, in the
// transaction that would apply them, once someone else saved in between.
func (r *Read) stamped(form url.Values) Read {
	if gen := TypedOn(form); gen != nil {
		for i := range r.Changes {
			g := *gen
			r.Changes[i].Generation = &g
		}
	}
	return *r
}

// SplitList splits what people paste: names or uuids separated by spaces,
// commas, semicolons, tabs or new lines; duplicates are dropped, order
// kept.
func SplitList(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\n' || r == '\r' || r == '\t'
	})
	return Dedupe(f)
}

// Dedupe trims each value and drops empty and repeated ones, order kept.
func Dedupe(s []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, x := range s {
		x = strings.TrimSpace(x)
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// CheckGeneration refuses a form typed on another generation of the
// object than the current one, as the store refuses a stale direct edit.
func CheckGeneration(what, name string, typedOn, current int64) error {
	if typedOn != current {
		return models.E(models.Conflict, "generation", "%s %s was changed by someone else — reload", what, name)
	}
	return nil
}

// Field is the form field an applier's error names, without the
// "changes[2]." of the change it came from.
func Field(err error) string {
	f := models.FieldOf(err)
	if strings.HasPrefix(f, "changes[") {
		if i := strings.Index(f, "]."); i >= 0 {
			return f[i+2:]
		}
	}
	return f
}

// UpperFirst capitalises a message's first letter.
func UpperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// Row is one key/value row of an editor as typed.
type Row struct{ Key, Value string }

// Rows reads the key/value rows of an editor, in order, the map they make
// and the problems of the form itself (a key given twice, a value without
// a key). The first of two rows with one key counts.
func Rows(form url.Values) ([]Row, map[string]string, []Problem) {
	keys, vals := form["key"], form["value"]
	var rows []Row
	md := map[string]string{}
	var probs []Problem
	for i, k := range keys {
		v := ""
		if i < len(vals) {
			v = vals[i]
		}
		k = strings.TrimSpace(k)
		if k == "" {
			if strings.TrimSpace(v) != "" {
				probs = append(probs, Problem{Message: fmt.Sprintf("The value “%s” has no key; give it one or clear it.", v)})
				rows = append(rows, Row{Key: k, Value: v})
			}
			continue
		}
		rows = append(rows, Row{Key: k, Value: v})
		if _, dup := md[k]; dup {
			probs = append(probs, Problem{Key: k, Message: "This key is given twice; keep one."})
			continue
		}
		md[k] = v
	}
	return rows, md, probs
}

// ProblemsOf words the scheduling package's findings for an editor.
func ProblemsOf(ps []scheduling.Problem) []Problem {
	out := make([]Problem, 0, len(ps))
	for _, p := range ps {
		out = append(out, Problem{Key: p.Key, Message: UpperFirst(p.Message) + ".", Warning: p.Severity != scheduling.SeverityError})
	}
	return out
}

// nameClass is what a resource class and a trait are made of.
var nameClass = regexp.MustCompile(`^[A-Z0-9_]+$`)

// Impact kinds: the impact_form field of a console form, for the inline
// impact and "Stage as draft". The settings form is read by its own page.
const (
	KindAggregateNew       = "aggregate-new"
	KindZone               = "zone" // the aggregate's name and zone form
	KindMetadata           = "metadata"
	KindTenants            = "tenants"
	KindReservations       = "reservations"
	KindTenantsRemove      = "tenants-remove"
	KindReservationsRemove = "reservations-remove"
	KindMembers            = "members"
	KindMembersRemove      = "members-remove"
	KindAggregateDel       = "aggregate-delete"
	KindFlavor             = "flavor"
	KindFlavorNew          = "flavor-new"
	KindFlavorDelete       = "flavor-delete"
	KindGroupNew           = "group-new"
	KindGroupMembers       = "group-members"
	KindGroupRemove        = "group-members-remove"
	KindGroupDelete        = "group-delete"
	KindProviderTraits     = "provider-traits"
	KindInventory          = "provider-inventory"
)

// Kinds lists every kind ForImpact reads.
var Kinds = []string{KindAggregateNew, KindZone, KindMetadata, KindTenants, KindTenantsRemove, KindReservations, KindReservationsRemove, KindMembers, KindMembersRemove,
	KindAggregateDel, KindFlavorNew, KindFlavor, KindFlavorDelete, KindGroupNew, KindGroupMembers, KindGroupRemove, KindGroupDelete, KindProviderTraits, KindInventory}

// Who is the person a form is read for: a server group is created for
// their project and as their user.
type Who struct {
	User, Project string
	Admin         bool
}

// ForImpact reads the form of kind about target (an aggregate, flavor,
// server group or provider, by UUID or name) against snap: the one
// dispatch the inline impact, "Stage as draft" and the tests use.
func ForImpact(kind, target string, form url.Values, snap *scheduling.Snapshot, who Who) (Read, error) {
	w := snap.World()
	switch kind {
	case KindAggregateNew:
		return AggregateCreate(form, snap), nil
	case KindFlavorNew:
		return FlavorCreate(form, w.Settings), nil
	case KindFlavor, KindFlavorDelete:
		f, ok := snap.Flavor(target)
		if !ok {
			return Read{}, models.E(models.Invalid, "impact_target", "no flavor %q", target)
		}
		if kind == KindFlavorDelete {
			return FlavorDelete(f), nil
		}
		return Flavor(form, f, w.Settings), nil
	case KindGroupNew:
		return GroupCreate(form, who), nil
	case KindGroupMembers, KindGroupRemove, KindGroupDelete:
		g, err := snap.ServerGroup(target, "")
		// Only admins see other projects' groups, as on the group pages.
		if err == nil && !who.Admin && g.ProjectID != who.Project {
			err = models.E(models.NotFound, "impact_target", "no server group %q", target)
		}
		if err != nil {
			return Read{}, models.E(models.Invalid, "impact_target", "no server group %q", target)
		}
		switch kind {
		case KindGroupMembers:
			return GroupMembersAdd(form, g, w), nil
		case KindGroupRemove:
			return GroupMembersRemove(form, g), nil
		}
		return GroupDelete(g), nil
	case KindProviderTraits, KindInventory:
		p, ok := snap.Provider(target)
		if !ok {
			return Read{}, models.E(models.Invalid, "impact_target", "no provider %q", target)
		}
		if kind == KindInventory {
			return Inventory(form, p), nil
		}
		return Traits(form, p), nil
	}
	agg, ok := snap.Aggregate(target)
	if !ok {
		return Read{}, models.E(models.Invalid, "impact_target", "no aggregate %q", target)
	}
	switch kind {
	case KindZone:
		return AggregateUpdate(form, agg, snap), nil
	case KindMetadata:
		return Metadata(form, agg, snap), nil
	case KindTenants, KindTenantsRemove:
		return Tenants(form, agg, snap, kind == KindTenantsRemove), nil
	case KindReservations, KindReservationsRemove:
		return Reservations(form, agg, snap, kind == KindReservationsRemove), nil
	case KindMembers:
		return MembersAdd(form, agg, snap), nil
	case KindMembersRemove:
		return MembersRemove(form, agg, snap), nil
	case KindAggregateDel:
		return AggregateDelete(agg, snap), nil
	}
	return Read{}, models.E(models.Invalid, "impact_form", "unknown form %q", kind)
}
