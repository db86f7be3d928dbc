// Package jsonschema validates decoded request bodies (pycompat values:
// *pycompat.Object keeps the keys in request order) against JSON schemas and
// reports the error Python's jsonschema library would, word for word, as
// Nova and Placement return it in their 400 bodies.
//
// Which error comes first depends on the order of the keywords in each
// schema, so a Schema is an ordered list of keywords, written in the order
// of the upstream schema's dict:
//
//	// placement/schemas/resource_provider.py POST_RESOURCE_PROVIDER_SCHEMA
//	var createProvider = jsonschema.Schema{
//		jsonschema.Type("object"),
//		jsonschema.Properties(
//			jsonschema.Prop{Name: "name", Schema: jsonschema.Schema{jsonschema.Type("string"), jsonschema.MaxLength(200)}},
//			jsonschema.Prop{Name: "uuid", Schema: jsonschema.Schema{jsonschema.Type("string"), jsonschema.Format("uuid", isUUID)}},
//		),
//		jsonschema.Required("name"),
//		jsonschema.NoAdditional([]string{"name", "uuid"}),
//	}
//
// and validated in the dialect of the service that owns it:
//
//	body, err := pycompat.DecodeJSON(raw)
//	…
//	if e := jsonschema.Placement.Validate(createProvider, body); e != nil {
//		return badRequest("JSON does not validate: " + e.Msg)
//	}
//
// The two dialects differ as the services do. Nova runs a Draft4Validator
// and raises the first error it meets (3.0 is not an integer; minimum and
// maximum also read numeric strings). Placement calls jsonschema.validate,
// which uses the latest draft (3.0 is an integer) and raises best_match of
// all errors: the shallowest one, a type mismatch before other failures at
// the same depth, anyOf/oneOf only when nothing else failed there, and then
// the deepest error inside that anyOf/oneOf.
//
// To add a schema for a new endpoint (Placement's inventories, allocations,
// allocation candidates, …), copy the upstream schema keyword by keyword, in
// its order, and validate the body in the service's dialect before reading
// it. A keyword not provided yet (allOf, minProperties, …) is one more type
// in this package implementing Keyword, with jsonschema's message. Then add
// the schema to the service's oracle test
// (handlers/placementapi/schema_oracle_test.go,
// handlers/compute/schema_oracle_test.go): the upstream schema in Python —
// best imported from the service's own modules, as the Placement resource
// schemas are from Debian's python3-placement (placement.schemas.*) —
// yours in Go, and a valid body or two as seeds; jsonschematest derives
// hundreds of awkward bodies from them and compares every message with
// Python's jsonschema (or with nova-api's own validator).
package jsonschema
