package compute

import js "corral/handlers/jsonschema"

// Request schemas, keyword for keyword in the order Nova declares them
// (nova/api/openstack/compute/schemas/{server_groups,aggregates}.py).

func nameSchema() js.Schema {
	return js.Schema{js.Type("string"), js.MinLength(1), js.MaxLength(255), js.NameFormat("name", isName, reasonName)}
}

func nameWithSpacesSchema() js.Schema {
	return js.Schema{js.Type("string"), js.MinLength(1), js.MaxLength(255), js.NameFormat("name_with_leading_trailing_spaces", isNameWithSpaces, reasonNameWithSpaces)}
}

func azNameSchema() js.Schema {
	return js.Schema{js.Type("string"), js.MinLength(1), js.MaxLength(255), js.NameFormat("az_name", isAZName, reasonAZName)}
}

func positiveInteger() js.Schema {
	return js.Schema{js.Type("integer", "string"), js.Pattern(`^[0-9]*$`), js.Minimum(1), js.MinLength(1)}
}

func nonNegativeInteger() js.Schema {
	return js.Schema{js.Type("integer", "string"), js.Pattern(`^[0-9]*$`), js.Minimum(0), js.MinLength(1)}
}

func policiesSchema(enum ...string) js.Schema {
	return js.Schema{
		js.Type("array"),
		js.PrefixItems(js.Schema{js.Type("string"), js.EnumStrings(enum...)}),
		js.UniqueItems(), js.MinItems(1), js.MaxItems(1),
	}
}

func serverGroupCreate(group ...js.Prop) js.Schema {
	names := make([]string, len(group))
	for i, p := range group {
		names[i] = p.Name
	}
	required := []string{"name", names[1]}
	return js.Schema{
		js.Type("object"),
		js.Properties(js.Prop{Name: "server_group", Schema: js.Schema{
			js.Type("object"),
			js.Properties(group...),
			js.Required(required...),
			js.NoAdditional(names),
		}}),
		js.Required("server_group"),
		js.NoAdditional([]string{"server_group"}),
	}
}

var (
	policies21  = []string{"anti-affinity", "affinity"}
	policies215 = []string{"anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity"}

	sgCreateV21 = serverGroupCreate(
		js.Prop{Name: "name", Schema: nameSchema()},
		js.Prop{Name: "policies", Schema: policiesSchema(policies21...)},
	)
	sgCreateV215 = serverGroupCreate(
		js.Prop{Name: "name", Schema: nameSchema()},
		js.Prop{Name: "policies", Schema: policiesSchema(policies215...)},
	)
	sgCreateV264 = serverGroupCreate(
		js.Prop{Name: "name", Schema: nameSchema()},
		js.Prop{Name: "policy", Schema: js.Schema{js.Type("string"), js.EnumStrings(policies215...)}},
		js.Prop{Name: "rules", Schema: js.Schema{
			js.Type("object"),
			js.Properties(js.Prop{Name: "max_server_per_host", Schema: positiveInteger()}),
			js.NoAdditional([]string{"max_server_per_host"}),
		}},
	)
)

// serverGroupCreateSchema picks the create schema for a version.
func serverGroupCreateSchema(v Version) js.Schema {
	switch {
	case v.AtLeast(2, 64):
		return sgCreateV264
	case v.AtLeast(2, 15):
		return sgCreateV215
	}
	return sgCreateV21
}

// Query schemas see the query string as {name: [values...]}.
func multiParams(s js.Schema) js.Schema { return js.Schema{js.Type("array"), js.Items(s)} }

func sgIndexQuery(strict bool) js.Schema {
	s := js.Schema{
		js.Type("object"),
		js.Properties(
			js.Prop{Name: "all_projects", Schema: multiParams(js.Schema{js.Type("string")})},
			js.Prop{Name: "limit", Schema: multiParams(nonNegativeInteger())},
			js.Prop{Name: "offset", Schema: multiParams(nonNegativeInteger())},
		),
	}
	if strict {
		s = append(s, js.NoAdditional([]string{"all_projects", "limit", "offset"}))
	}
	return s
}

var (
	sgIndexQueryV21  = sgIndexQuery(false)
	sgIndexQueryV275 = sgIndexQuery(true)
	emptyQueryStrict = js.Schema{js.Type("object"), js.Properties(), js.NoAdditional(nil)}
)

// ---- aggregates

func azOrNull() js.Schema {
	return js.Schema{js.OneOf(azNameSchema(), js.Schema{js.Type("null")})}
}

var (
	aggCreate = js.Schema{
		js.Type("object"),
		js.Properties(js.Prop{Name: "aggregate", Schema: js.Schema{
			js.Type("object"),
			js.Properties(
				js.Prop{Name: "name", Schema: nameSchema()},
				js.Prop{Name: "availability_zone", Schema: azOrNull()},
			),
			js.Required("name"),
			js.NoAdditional([]string{"name", "availability_zone"}),
		}}),
		js.Required("aggregate"),
		js.NoAdditional([]string{"aggregate"}),
	}
	aggUpdate = js.Schema{
		js.Type("object"),
		js.Properties(js.Prop{Name: "aggregate", Schema: js.Schema{
			js.Type("object"),
			js.Properties(
				js.Prop{Name: "name", Schema: nameWithSpacesSchema()},
				js.Prop{Name: "availability_zone", Schema: azOrNull()},
			),
			js.NoAdditional([]string{"name", "availability_zone"}),
			js.AnyOf(js.Schema{js.Required("name")}, js.Schema{js.Required("availability_zone")}),
		}}),
		js.Required("aggregate"),
		js.NoAdditional([]string{"aggregate"}),
	}
	fqdn = js.Schema{js.Type("string"), js.MinLength(1), js.MaxLength(255), js.Pattern(`^[a-zA-Z0-9-._]*$`)}

	metadataKey     = `^[a-zA-Z0-9-_:. ]{1,255}$`
	metadataWithNil = js.Schema{
		js.Type("object"),
		js.PatternProperties(js.PatternProp{Pattern: metadataKey, Schema: js.Schema{js.Type("string", "null"), js.MaxLength(255)}}),
		js.NoAdditional(nil, metadataKey),
	}
)

func hostAction(action string) js.Schema {
	return js.Schema{
		js.Type("object"),
		js.Properties(js.Prop{Name: action, Schema: js.Schema{
			js.Type("object"),
			js.Properties(js.Prop{Name: "host", Schema: fqdn}),
			js.Required("host"),
			js.NoAdditional([]string{"host"}),
		}}),
		js.Required(action),
		js.NoAdditional([]string{action}),
	}
}

var (
	aggAddHost     = hostAction("add_host")
	aggRemoveHost  = hostAction("remove_host")
	aggSetMetadata = js.Schema{
		js.Type("object"),
		js.Properties(js.Prop{Name: "set_metadata", Schema: js.Schema{
			js.Type("object"),
			js.Properties(js.Prop{Name: "metadata", Schema: metadataWithNil}),
			js.Required("metadata"),
			js.NoAdditional([]string{"metadata"}),
		}}),
		js.Required("set_metadata"),
		js.NoAdditional([]string{"set_metadata"}),
	}
)
