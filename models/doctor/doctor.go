// Package doctor finds the scheduling traps of a world: each finding says
// which objects are involved, why it matters and, where one exists, the
// fix as draft changes. It is pure (the standard library, models and the
// scheduling core only), so the console, the CLI and the sync report share
// one implementation of every check.
package doctor

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// Severity is how loud a finding is.
type Severity string

// The severities, loudest first.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Severities lists the severities, loudest first.
var Severities = []Severity{SeverityError, SeverityWarning, SeverityInfo}

func (s Severity) rank() int { return slices.Index(Severities, s) }

// Object kinds a finding names.
const (
	KindAggregate   = "aggregate"
	KindProvider    = "provider"
	KindFlavor      = "flavor"
	KindServerGroup = "server_group"
	KindConsumer    = "consumer"
)

// Object is one object a finding involves.
type Object struct {
	Kind string `json:"kind"`
	UUID string `json:"uuid"`
	Name string `json:"name"`
}

// Finding is one trap found in the world.
type Finding struct {
	// Code names the trap; it is stable (docs/formats.md lists them).
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Objects  []Object `json:"objects"`
	// Why is one sentence on why it matters; Detail says what exactly was
	// found (an acknowledgement holds while Detail stays the same).
	Why    string `json:"why"`
	Detail string `json:"detail"`
	// Fix, when not empty, are the changes that remove the finding.
	Fix []scheduling.Change `json:"fix,omitempty"`
}

// Key identifies the finding's subject: its code and a hash of its
// objects ("tenant_comma_list/3fa2…"). It stays the same when the
// finding's content changes (see Fingerprint).
func (f *Finding) Key() string {
	h := sha256.New()
	for _, o := range f.Objects {
		h.Write([]byte(o.Kind + ":" + o.UUID + "\n"))
	}
	return f.Code + "/" + hex.EncodeToString(h.Sum(nil)[:8])
}

// Involves reports whether the finding names the object of that kind and
// UUID (a flavor's id): what a page about one host or aggregate shows.
func (f *Finding) Involves(kind, uuid string) bool {
	return slices.ContainsFunc(f.Objects, func(o Object) bool { return o.Kind == kind && o.UUID == uuid })
}

// Fingerprint is a hash of what the finding says: an acknowledgement of an
// older fingerprint no longer silences it.
func (f *Finding) Fingerprint() string {
	sum := sha256.Sum256([]byte(f.Detail))
	return hex.EncodeToString(sum[:8])
}

// Input is what Check reads: the live snapshot, Placement's consumers
// and, when connected, the last sync's membership drift.
type Input struct {
	Snapshot *scheduling.Snapshot
	// Drift is the last sync's report of hosts whose aggregate membership
	// Nova and Placement see differently.
	Drift []models.Disagreement
	// Consumers are Placement's consumers with their allocations; nil
	// reads the snapshot's world's (the live snapshot has none).
	Consumers []models.Consumer
}

// check is one trap's finder.
type check func(in *Input) ([]Finding, error)

// checks are every trap, in the order their findings are listed.
var checks = []check{
	isolationTraitMissing,
	tenantCommaLists,
	metadataTooLong,
	hostInTwoZones,
	reservationPrefixMissing,
	reservationNotForbidden,
	disabledHostInTenantAggregate,
	downHostInTenantAggregate,
	unscopedExtraSpecs,
	flavorsFitNoHost,
	serverGroupsViolated,
	orphanedAllocations,
	membershipDrift,
}

// Check runs every trap's check on the input and returns the findings,
// the loudest first, then by code and key.
func Check(in Input) ([]Finding, error) {
	var out []Finding
	for _, c := range checks {
		fs, err := c(&in)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		if d := a.Severity.rank() - b.Severity.rank(); d != 0 {
			return d
		}
		if c := strings.Compare(a.Code, b.Code); c != 0 {
			return c
		}
		return strings.Compare(a.Key(), b.Key())
	})
	return out, nil
}

// namesList joins at most max names, saying how many more there are.
func namesList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + " and " + itoa(len(names)-max) + " more"
}

func itoa(n int) string { return strconv.Itoa(n) }
