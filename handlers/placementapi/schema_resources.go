package placementapi

import (
	js "corral/handlers/jsonschema"
	"corral/models/placement"
)

// Request body schemas of the resource endpoints, keyword for keyword in
// the order of placement/schemas/{inventory,allocation,resource_class,
// trait}.py, one per microversion range as Placement's handlers pick them.
// schema_oracle_test.go checks each against those very modules.

// Placement's patterns (placement/schemas/common.py).
const (
	rcPatternText     = "^[A-Z0-9_]+$"
	customPatternText = "^CUSTOM_[A-Z0-9_]+$"
	uuidPatternText   = "^[0-9a-fA-F-]{36}$"
	groupPatternText  = "[a-zA-Z0-9_-]{1,64}" // GROUP_PAT_1_33, unanchored as upstream
)

func names(props []js.Prop) []string {
	out := make([]string, len(props))
	for i, p := range props {
		out[i] = p.Name
	}
	return out
}

// object is {"type": "object", "properties": …, "required": …,
// "additionalProperties": false}, the most common shape upstream.
func object(props []js.Prop, required ...string) js.Schema {
	return js.Schema{js.Type("object"), js.Properties(props...), js.Required(required...), js.NoAdditional(names(props))}
}

func integer() js.Schema { return js.Schema{js.Type("integer")} }

// boundedInt is an inventory field: an integer up to db_const.MAX_INT.
func boundedInt(min int64) js.Schema {
	return js.Schema{js.Type("integer"), js.Maximum(maxInt), js.Minimum(min)}
}

// inventoryProps are BASE_INVENTORY_SCHEMA's properties.
func inventoryProps() []js.Prop {
	return []js.Prop{
		{Name: "resource_provider_generation", Schema: integer()},
		{Name: "total", Schema: boundedInt(1)},
		{Name: "reserved", Schema: boundedInt(0)},
		{Name: "min_unit", Schema: boundedInt(1)},
		{Name: "max_unit", Schema: boundedInt(1)},
		{Name: "step_size", Schema: boundedInt(1)},
		// db_const.SQL_SP_FLOAT_MAX
		{Name: "allocation_ratio", Schema: js.Schema{js.Type("number"), js.MaximumFloat(3.40282e+38)}},
	}
}

var (
	// inventorySchema is BASE_INVENTORY_SCHEMA: PUT …/inventories/{rc}.
	inventorySchema = object(inventoryProps(), "total", "resource_provider_generation")
	// postInventorySchema is POST_INVENTORY_SCHEMA: POST …/inventories.
	postInventorySchema = object(append(inventoryProps(),
		js.Prop{Name: "resource_class", Schema: js.Schema{js.Type("string"), js.Pattern(rcPatternText)}}),
		"total", "resource_class")
	// inventoriesSchema is PUT_INVENTORY_SCHEMA: PUT …/inventories, whose
	// records are PUT_INVENTORY_RECORD_SCHEMA.
	inventoriesSchema = object([]js.Prop{
		{Name: "resource_provider_generation", Schema: integer()},
		{Name: "inventories", Schema: js.Schema{js.Type("object"),
			js.PatternProperties(js.PatternProp{Pattern: rcPatternText, Schema: object(inventoryProps(), "total")})}},
	}, "resource_provider_generation", "inventories")
)

// resourceClassSchema is POST_RC_SCHEMA_V1_2 (= PUT_RC_SCHEMA_V1_2).
var resourceClassSchema = object([]js.Prop{
	{Name: "name", Schema: js.Schema{js.Type("string"), js.Pattern(customPatternText), js.MaxLength(255)}},
}, "name")

// amounts is an allocation's "resources": class → positive integer.
func amounts() js.Schema {
	return js.Schema{js.Type("object"), js.MinProperties(1),
		js.PatternProperties(js.PatternProp{Pattern: rcPatternText, Schema: js.Schema{js.Type("integer"), js.Minimum(1)}}),
		js.NoAdditional(nil, rcPatternText)}
}

func idString() js.Schema { return js.Schema{js.Type("string"), js.MinLength(1), js.MaxLength(255)} }

// allocationSchema is the body of PUT /allocations/{consumer} at v
// (ALLOCATION_SCHEMA, _V1_8, _V1_12, _V1_28, _V1_34, _V1_38), or one
// consumer's entry of POST /allocations when inPost (DELETABLE_ALLOCATIONS,
// REQUIRED_GENERATION_ALLOCS_POST, ALLOCATION_SCHEMA_V1_34, _V1_38).
func allocationSchema(v placement.Version, inPost bool) js.Schema {
	if !v.AtLeast(12) {
		// ALLOCATION_SCHEMA: a list of {resource_provider, resources}.
		item := js.Schema{js.Type("object"),
			js.Properties(
				js.Prop{Name: "resource_provider", Schema: js.Schema{js.Type("object"),
					js.Properties(js.Prop{Name: "uuid", Schema: uuidString()}),
					js.NoAdditional([]string{"uuid"}), js.Required("uuid")}},
				js.Prop{Name: "resources", Schema: amounts()},
			),
			js.Required("resource_provider", "resources"),
			js.NoAdditional([]string{"resource_provider", "resources"})}
		props := []js.Prop{{Name: "allocations", Schema: js.Schema{js.Type("array"), js.MinItems(1), js.Items(item)}}}
		required := []string{"allocations"}
		if v.AtLeast(8) {
			props = append(props, js.Prop{Name: "project_id", Schema: idString()}, js.Prop{Name: "user_id", Schema: idString()})
			required = append(required, "project_id", "user_id")
		}
		return object(props, required...)
	}
	// ALLOCATION_SCHEMA_V1_12 and its copies: a dict by provider uuid;
	// DELETABLE_ALLOCATIONS (POST, and PUT from 1.28) may be empty.
	minProviders := 1
	if inPost || v.AtLeast(28) {
		minProviders = 0
	}
	perProvider := object([]js.Prop{
		{Name: "generation", Schema: integer()},
		{Name: "resources", Schema: amounts()},
	}, "resources")
	props := []js.Prop{
		{Name: "allocations", Schema: js.Schema{js.Type("object"), js.MinProperties(minProviders),
			js.PatternProperties(js.PatternProp{Pattern: uuidPatternText, Schema: perProvider}),
			js.NoAdditional(nil, uuidPatternText)}},
		{Name: "project_id", Schema: idString()},
		{Name: "user_id", Schema: idString()},
	}
	required := []string{"allocations", "project_id", "user_id"}
	if v.AtLeast(28) {
		props = append(props, js.Prop{Name: "consumer_generation", Schema: js.Schema{js.Type("integer", "null")}})
		required = append(required, "consumer_generation")
	}
	if v.AtLeast(34) {
		props = append(props, js.Prop{Name: "mappings", Schema: js.Schema{js.Type("object"), js.MinProperties(1),
			js.PatternProperties(js.PatternProp{Pattern: groupPatternText,
				Schema: js.Schema{js.Type("array"), js.MinItems(1), js.Items(uuidString())}})}})
	}
	if v.AtLeast(38) {
		props = append(props, js.Prop{Name: "consumer_type", Schema: js.Schema{js.Type("string"),
			js.Pattern(rcPatternText), js.MinLength(1), js.MaxLength(255)}})
		required = append(required, "consumer_type")
	}
	// V1_12's keys come in the order type, properties,
	// additionalProperties, required.
	return js.Schema{js.Type("object"), js.Properties(props...), js.NoAdditional(names(props)), js.Required(required...)}
}

// postAllocationsSchema is POST_ALLOCATIONS_V1_13, _V1_28, _V1_34, _V1_38.
func postAllocationsSchema(v placement.Version) js.Schema {
	return js.Schema{js.Type("object"), js.MinProperties(1), js.NoAdditional(nil, uuidPatternText),
		js.PatternProperties(js.PatternProp{Pattern: uuidPatternText, Schema: allocationSchema(v, true)})}
}

// Schemas built once per microversion: every allocation write reads one.
var allocationSchemas, postAllocationSchemas = func() (put, post []js.Schema) {
	for m := 0; m <= placement.Latest.Minor; m++ {
		put = append(put, allocationSchema(placement.V(m), false))
		post = append(post, postAllocationsSchema(placement.V(m)))
	}
	return put, post
}()

func schemaAt(list []js.Schema, v placement.Version) js.Schema {
	return list[min(v.Minor, placement.Latest.Minor)]
}
