package scheduling

import (
	"slices"
	"strings"

	"corral/models/placement"
)

// Preview is one request judged against live data and, with a draft,
// against the draft, with the difference.
type Preview struct {
	// Trace is the draft's trace when there is a draft, else live's.
	Trace *Trace `json:"trace"`
	// Live is live data's trace, with a draft.
	Live *Trace `json:"live,omitempty"`
	// Diff is what the draft changes for this request.
	Diff *TraceDiff `json:"diff,omitempty"`
	// DraftOnly names the aggregates the request names that only the
	// draft has. Live data has no such aggregate, so no host is in it
	// there, as Placement answers for an aggregate UUID it does not know.
	DraftOnly []string `json:"draft_only,omitempty"`
}

// RunPreview judges spec on live and, when draft is not nil, on draft and
// diffs the two. This is the one rule for names only the draft has: the
// request's aggregate names are resolved on the draft, the world the
// question is about, and live data then reads the draft's UUID for them,
// matching no host. So a request naming an aggregate the draft creates
// gets both traces and a diff (every host of the new aggregate newly
// eligible), never an error. Bad input is an Invalid error naming the
// field, judged on the draft first.
func RunPreview(live, draft *Snapshot, spec *RequestSpec) (*Preview, error) {
	if spec == nil {
		spec = &RequestSpec{}
	}
	if draft == nil {
		tr, err := live.Run(spec)
		if err != nil {
			return nil, err
		}
		return &Preview{Trace: tr}, nil
	}
	tr, err := draft.Run(spec)
	if err != nil {
		return nil, err
	}
	liveSpec, only := draft.pinNames(live, spec)
	lt, err := live.Run(liveSpec)
	if err != nil {
		return nil, err
	}
	d := DiffTraces(lt, tr)
	return &Preview{Trace: tr, Live: lt, Diff: &d, DraftOnly: only}, nil
}

// pinNames returns spec with every aggregate name that s knows and other
// does not replaced by its UUID in s, and those names. The spec is copied
// only when something changes.
func (s *Snapshot) pinNames(other *Snapshot, spec *RequestSpec) (*RequestSpec, []string) {
	var only []string
	pin := func(values []string) ([]string, bool) {
		var out []string
		for i, v := range values {
			nv := s.pinValue(other, v, &only)
			if nv != v && out == nil {
				out = slices.Clone(values)
			}
			if out != nil {
				out[i] = nv
			}
		}
		return out, out != nil
	}
	c := *spec
	changed := false
	if mo, ok := pin(spec.Placement.MemberOf); ok {
		c.Placement.MemberOf, changed = mo, true
	}
	if len(spec.Placement.Groups) > 0 {
		groups := make(map[string]GroupSpec, len(spec.Placement.Groups))
		for k, g := range spec.Placement.Groups {
			if mo, ok := pin(g.MemberOf); ok {
				g.MemberOf, changed = mo, true
			}
			groups[k] = g
		}
		c.Placement.Groups = groups
	}
	if !changed {
		return spec, nil
	}
	slices.Sort(only)
	return &c, slices.Compact(only)
}

// pinValue is pinNames for one member_of value.
func (s *Snapshot) pinValue(other *Snapshot, v string, only *[]string) string {
	prefix, rest := splitMemberOfPrefix(v)
	elems := strings.Split(rest, ",")
	changed := false
	for i, e := range elems {
		if placement.IsUUIDLike(e) {
			continue
		}
		if _, ok := other.ix.AggregateByName(e); ok {
			continue
		}
		if a, ok := s.ix.AggregateByName(e); ok {
			elems[i] = s.ix.Aggregate(a).UUID
			*only = append(*only, e)
			changed = true
		}
	}
	if !changed {
		return v
	}
	return prefix + strings.Join(elems, ",")
}

// splitMemberOfPrefix splits a member_of value into its operator prefix
// ("!in:", "in:", "!" or "") and the aggregate list.
func splitMemberOfPrefix(v string) (prefix, rest string) {
	for _, p := range []string{"!in:", "in:", "!"} {
		if strings.HasPrefix(v, p) {
			return p, v[len(p):]
		}
	}
	return "", v
}
