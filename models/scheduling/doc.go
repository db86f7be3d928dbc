// Package scheduling is corral's pure model of Nova's scheduler: given a
// world (models.World) and a request, it answers where an instance could go
// and why every other host could not.
//
// NewSnapshot indexes a world once; Snapshot.Run takes one request
// (RequestSpec: a flavor, a project, a server group, Placement terms,
// settings overrides) through Nova's pipeline — the request filters that
// turn tenant, reservation and availability-zone rules into member_of terms,
// Placement's filtering (models/placement), the enabled host filters
// (AggregateInstanceExtraSpecsFilter, AggregateMultiTenancyIsolation, the
// server-group filters, …) and the weighers — and returns a Trace that says
// what each step did to each host. Runs share the snapshot and may be
// concurrent.
//
// Around the pipeline: drafts (Change, ApplyChanges) stage edits to a world
// to be run against before they are made; Validate* explain what an
// aggregate's metadata or a flavor's extra specs mean to the filters;
// TranslateBlazar restates a Blazar deployment's conventions in corral's
// tags.
//
// The package is pure: it imports the standard library (no I/O), models and
// models/placement only, which a test enforces.
package scheduling
