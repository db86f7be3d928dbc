package compute

// Request schemas, keyword for keyword in the order Nova declares them
// (nova/api/openstack/compute/schemas/{server_groups,aggregates}.py).

func nameSchema() Schema {
	return Schema{Type("string"), Format(isName, reasonName), MinLength(1), MaxLength(255)}
}

func nameWithSpacesSchema() Schema {
	return Schema{Type("string"), Format(isNameWithSpaces, reasonNameWithSpaces), MinLength(1), MaxLength(255)}
}

func azNameSchema() Schema {
	return Schema{Type("string"), Format(isAZName, reasonAZName), MinLength(1), MaxLength(255)}
}

func positiveInteger() Schema {
	return Schema{Type("integer", "string"), Pattern(`^[0-9]*$`), Minimum(1), MinLength(1)}
}

func nonNegativeInteger() Schema {
	return Schema{Type("integer", "string"), Pattern(`^[0-9]*$`), Minimum(0), MinLength(1)}
}

func policiesSchema(enum ...string) Schema {
	return Schema{
		Type("array"),
		PrefixItems(Schema{Type("string"), Enum(enum...)}),
		UniqueItems(), MinItems(1), MaxItems(1),
	}
}

func serverGroupCreate(group ...Prop) Schema {
	names := make([]string, len(group))
	for i, p := range group {
		names[i] = p.Name
	}
	required := []string{"name", names[1]}
	return Schema{
		Type("object"),
		Properties(Prop{"server_group", Schema{
			Type("object"),
			Properties(group...),
			Required(required...),
			NoAdditional(names),
		}}),
		Required("server_group"),
		NoAdditional([]string{"server_group"}),
	}
}

var (
	policies21  = []string{"anti-affinity", "affinity"}
	policies215 = []string{"anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity"}

	sgCreateV21 = serverGroupCreate(
		Prop{"name", nameSchema()},
		Prop{"policies", policiesSchema(policies21...)},
	)
	sgCreateV215 = serverGroupCreate(
		Prop{"name", nameSchema()},
		Prop{"policies", policiesSchema(policies215...)},
	)
	sgCreateV264 = serverGroupCreate(
		Prop{"name", nameSchema()},
		Prop{"policy", Schema{Type("string"), Enum(policies215...)}},
		Prop{"rules", Schema{
			Type("object"),
			Properties(Prop{"max_server_per_host", positiveInteger()}),
			NoAdditional([]string{"max_server_per_host"}),
		}},
	)
)

// serverGroupCreateSchema picks the create schema for a version.
func serverGroupCreateSchema(v Version) Schema {
	switch {
	case v.AtLeast(2, 64):
		return sgCreateV264
	case v.AtLeast(2, 15):
		return sgCreateV215
	}
	return sgCreateV21
}

// Query schemas see the query string as {name: [values...]}.
func multiParams(s Schema) Schema { return Schema{Type("array"), Items(s)} }

func sgIndexQuery(strict bool) Schema {
	s := Schema{
		Type("object"),
		Properties(
			Prop{"all_projects", multiParams(Schema{Type("string")})},
			Prop{"limit", multiParams(nonNegativeInteger())},
			Prop{"offset", multiParams(nonNegativeInteger())},
		),
	}
	if strict {
		s = append(s, NoAdditional([]string{"all_projects", "limit", "offset"}))
	}
	return s
}

var (
	sgIndexQueryV21  = sgIndexQuery(false)
	sgIndexQueryV275 = sgIndexQuery(true)
	emptyQueryStrict = Schema{Type("object"), Properties(), NoAdditional(nil)}
)

// ---- aggregates

func azOrNull() Schema {
	return Schema{OneOf(azNameSchema(), Schema{Type("null")})}
}

var (
	aggCreate = Schema{
		Type("object"),
		Properties(Prop{"aggregate", Schema{
			Type("object"),
			Properties(
				Prop{"name", nameSchema()},
				Prop{"availability_zone", azOrNull()},
			),
			Required("name"),
			NoAdditional([]string{"name", "availability_zone"}),
		}}),
		Required("aggregate"),
		NoAdditional([]string{"aggregate"}),
	}
	aggUpdate = Schema{
		Type("object"),
		Properties(Prop{"aggregate", Schema{
			Type("object"),
			Properties(
				Prop{"name", nameWithSpacesSchema()},
				Prop{"availability_zone", azOrNull()},
			),
			NoAdditional([]string{"name", "availability_zone"}),
			AnyOf(Schema{Required("name")}, Schema{Required("availability_zone")}),
		}}),
		Required("aggregate"),
		NoAdditional([]string{"aggregate"}),
	}
	fqdn = Schema{Type("string"), Pattern(`^[a-zA-Z0-9-._]*$`), MinLength(1), MaxLength(255)}

	metadataKey     = `^[a-zA-Z0-9-_:. ]{1,255}$`
	metadataWithNil = Schema{
		Type("object"),
		PatternProperties(PatternProp{metadataKey, Schema{Type("string", "null"), MaxLength(255)}}),
		NoAdditional(nil, metadataKey),
	}
)

func hostAction(action string) Schema {
	return Schema{
		Type("object"),
		Properties(Prop{action, Schema{
			Type("object"),
			Properties(Prop{"host", fqdn}),
			Required("host"),
			NoAdditional([]string{"host"}),
		}}),
		Required(action),
		NoAdditional([]string{action}),
	}
}

var (
	aggAddHost     = hostAction("add_host")
	aggRemoveHost  = hostAction("remove_host")
	aggSetMetadata = Schema{
		Type("object"),
		Properties(Prop{"set_metadata", Schema{
			Type("object"),
			Properties(Prop{"metadata", metadataWithNil}),
			Required("metadata"),
			NoAdditional([]string{"metadata"}),
		}}),
		Required("set_metadata"),
		NoAdditional([]string{"set_metadata"}),
	}
)
