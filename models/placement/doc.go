// Package placement is corral's model of OpenStack Placement's aggregate
// filtering: the member_of grammar (with Placement's validation order and
// messages), provider trees with sharing providers, an aggregate index built
// on bitsets, and the three ways a member_of request can be evaluated.
//
// # The member_of grammar
//
// A request group restricts providers by aggregate with parameters
//
//	member_of<suffix>=value           repeatable from 1.24
//
//	suffix = ""                        the unnumbered group (1.3)
//	       | [1-9][0-9]*               a numbered group (1.25)
//	       | [A-Za-z0-9_-]{1,64}       a named group (1.33)
//	value  = uuid                      in this aggregate
//	       | "in:" uuid {"," uuid}     in any of these
//	       | "!" uuid                  not in this aggregate (1.32)
//	       | "!in:" uuid {"," uuid}    in none of these (1.32)
//
// where uuid is what oslo's is_uuid_like accepts (IsUUIDLike). The values
// of one group make its Terms: every positive value is one required term,
// the terms are AND-ed and the aggregates inside a term OR-ed; every
// negative value joins one forbidden set. So
//
//	member_of=in:A,B&member_of=C&member_of=!in:D,E
//
// asks for a provider in (A or B) and in C, and in neither D nor E.
// ParseMemberOf refuses a comma outside in: and !in:, a value that is not a
// UUID and a form the microversion does not have yet, in Placement's order
// and with its messages. UUIDs are compared as sent. An unknown aggregate is
// no error: forbidding it excludes nothing, and a term naming only unknown
// aggregates matches nothing.
//
// # The three modes
//
// The same terms select different providers depending on where they are
// sent (Mode):
//
//	Direct      GET /resource_providers: a provider passes or fails on
//	            its own aggregates.
//	Unnumbered  the unnumbered group of GET /allocation_candidates, the
//	            one Nova's scheduler sends: a provider also passes when the
//	            root of its tree meets every required term (either the
//	            provider meets them all or its root does; a mix of the two
//	            does not count), except a sharing provider, which must meet
//	            them itself; and it fails when it or its root is in a
//	            forbidden aggregate.
//	Numbered    a numbered or named group of GET /allocation_candidates:
//	            its own aggregates, as Direct.
//
// NewIndex indexes a world's providers and aggregates once; Index.Evaluate
// judges every provider in one mode, and Result.Explain says why one was
// excluded.
//
// The package is pure: it imports the standard library and corral/models only.
package placement
