// Package compute serves corral's Nova-compatible API under /compute:
// the version documents, os-server-groups and os-aggregates, with Nova's
// microversion negotiation (2.1 … 2.104), request schemas, validation
// messages, fault bodies, default policy and quotas. It writes through the
// same store, validation, generations and audit log as the console.
//
// See README.md for what is and is not implemented, and how corral's
// answers differ from nova-api's where they must.
package compute
