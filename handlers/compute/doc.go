// Package compute serves corral's Nova-compatible API under /compute:
// the version documents, os-server-groups and os-aggregates, with Nova's
// microversion negotiation (2.1 … 2.104), request schemas, validation
// messages, fault bodies, default policy and quotas. It writes through the
// same store, validation, generations and audit log as the console.
//
// Handlers and middleware return their errors — a *Fault with Nova's status
// and message, a models.Error, any error — and one renderer (renderError)
// writes every one of them as Nova's fault body; a server error's detail
// goes to the log, never to the client. Request bodies and query strings
// are checked with handlers/jsonschema in the Nova dialect.
//
// See README.md for what is and is not implemented, and how corral's
// answers differ from nova-api's where they must.
package compute
