// Package doctor serves the Doctor page (every scheduling trap of the
// live world, each with its fix as a draft) and builds the report the page
// and `corral doctor` share: the core's findings (models/doctor) with the
// last sync's membership drift, Placement's consumers and the stored
// acknowledgements.
package doctor

import (
	"context"
	"time"

	"corral/models"
	core "corral/models/doctor"
	"corral/models/store"
)

// Report is the doctor's answer; its JSON is `corral doctor --format
// json`'s (docs/formats.md, "Doctor findings").
type Report struct {
	// Revision is the live revision the findings were judged on.
	Revision int64   `json:"revision"`
	Findings []Entry `json:"findings"`
	// Counts are the findings by severity that are not acknowledged.
	Counts       map[core.Severity]int `json:"counts"`
	Acknowledged int                   `json:"acknowledged"`
}

// Entry is one finding with its identity and acknowledgement.
type Entry struct {
	core.Finding
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	// Acknowledged is set when someone acknowledged this finding as it
	// reads now; an acknowledgement of an older content does not count.
	Acknowledged *Ack `json:"acknowledged"`
}

// Ack is who acknowledged a finding, when and why.
type Ack struct {
	By     string    `json:"by"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// Failing reports whether an error-severity finding is not acknowledged
// (`corral doctor` then exits 1).
func (r *Report) Failing() bool { return r.Counts[core.SeverityError] > 0 }

// Build judges the store's live world.
func Build(ctx context.Context, st *store.Store) (*Report, error) {
	snap, rev, err := st.Live().Get(ctx)
	if err != nil {
		return nil, err
	}
	consumers, err := st.Consumers(ctx)
	if err != nil {
		return nil, err
	}
	drift, err := lastDrift(ctx, st)
	if err != nil {
		return nil, err
	}
	fs, err := core.Check(core.Input{Snapshot: snap, Drift: drift, Consumers: consumers})
	if err != nil {
		return nil, err
	}
	acks, err := st.FindingAcks(ctx)
	if err != nil {
		return nil, err
	}
	r := &Report{Revision: rev, Findings: make([]Entry, len(fs)), Counts: map[core.Severity]int{}}
	for _, s := range core.Severities {
		r.Counts[s] = 0
	}
	for i, f := range fs {
		e := Entry{Finding: f, Key: f.Key(), Fingerprint: f.Fingerprint()}
		if a, ok := acks[e.Key]; ok && a.Fingerprint == e.Fingerprint {
			e.Acknowledged = &Ack{By: a.Actor, Reason: a.Reason, At: a.CreatedAt.UTC()}
			r.Acknowledged++
		} else {
			r.Counts[f.Severity]++
		}
		r.Findings[i] = e
	}
	return r, nil
}

// Find returns the entry under key, or nil.
func (r *Report) Find(key string) *Entry {
	for i := range r.Findings {
		if r.Findings[i].Key == key {
			return &r.Findings[i]
		}
	}
	return nil
}

// lastDrift is the last successful sync's Nova/Placement membership
// drift, none when corral never synced.
func lastDrift(ctx context.Context, st *store.Store) ([]models.Disagreement, error) {
	last, err := st.LastSuccessfulSync(ctx)
	if err != nil || last == nil {
		return nil, err
	}
	return last.Disagreements, nil
}
