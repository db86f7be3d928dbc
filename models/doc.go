// Package models holds corral's vocabulary, shared by every other package:
// the entities of a cloud's scheduling world (resource providers and their
// inventories, aggregates, flavors, servers, server groups, quotas) and of
// the console (users and their roles, API tokens, audit events), the
// scheduler settings, the World that gathers them and its JSON format
// (corral.world/v1, DecodeWorld and EncodeWorld), and the Error every layer
// returns: a Kind that the HTTP side maps to a status, the input Field at
// fault and a message a person can act on.
//
// The entities are plain structs. Their gorm tags describe the columns
// models/store reads and writes (its SQL migrations create the tables), but
// this package imports neither gorm nor any HTTP code: only the standard
// library.
package models
