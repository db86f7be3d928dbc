package compute

// Request schemas of os-quota-sets and /limits
// (nova/api/openstack/compute/schemas/{quota_sets,limits}.py), keyword for
// keyword in Nova's order so the first error reported is Nova's.

import (
	"math"

	js "corral/handlers/jsonschema"
)

// quotaResourcesInSchema is the order Nova's update schema lists the
// resources in; jsonschema checks properties in schema order, so this
// decides which of several bad values is reported.
var quotaResourcesInSchema = []string{
	"instances", "cores", "ram", "floating_ips", "fixed_ips", "metadata_items",
	"key_pairs", "security_groups", "security_group_rules", "injected_files",
	"injected_file_content_bytes", "injected_file_path_bytes",
	"server_groups", "server_group_members",
}

// commonQuota is one limit: an integer or a digit string, -1 … MAX_INT.
func commonQuota() js.Schema {
	return js.Schema{js.Type("integer", "string"), js.Pattern(`^-?[0-9]+$`), js.Minimum(-1), js.Maximum(math.MaxInt32)}
}

// booleanValues is parameter_types.boolean's enum, in its order.
var booleanValues = []any{
	true, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes",
	false, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no",
}

func booleanSchema() js.Schema {
	return js.Schema{js.Type("boolean", "string"), js.Enum(booleanValues...)}
}

// quotaUpdateSchema builds the PUT body schema without the resources
// hidden at v.
func quotaUpdateSchema(v Version) js.Schema {
	var props []js.Prop
	var names []string
	for _, r := range quotaResourcesInSchema {
		if quotaHiddenAt(v, r) {
			continue
		}
		props = append(props, js.Prop{Name: r, Schema: commonQuota()})
		names = append(names, r)
	}
	props = append(props, js.Prop{Name: "force", Schema: booleanSchema()})
	names = append(names, "force")
	return js.Schema{
		js.Type("object"),
		js.Properties(js.Prop{Name: "quota_set", Schema: js.Schema{
			js.Type("object"),
			js.Properties(props...),
			js.NoAdditional(names),
		}}),
		js.Required("quota_set"),
		js.NoAdditional([]string{"quota_set"}),
	}
}

var (
	quotaUpdateV21  = quotaUpdateSchema(Version{2, 1})
	quotaUpdateV236 = quotaUpdateSchema(Version{2, 36})
	quotaUpdateV257 = quotaUpdateSchema(Version{2, 57})
)

func quotaUpdateSchemaFor(v Version) js.Schema {
	switch {
	case v.AtLeast(2, 57):
		return quotaUpdateV257
	case v.AtLeast(2, 36):
		return quotaUpdateV236
	}
	return quotaUpdateV21
}

// Query schemas: show, detail, update and delete take user_id; from 2.75
// anything else is refused. The same shape serves /limits with tenant_id.
func oneParamQuery(name string, strict bool) js.Schema {
	s := js.Schema{js.Type("object"), js.Properties(js.Prop{Name: name, Schema: multiParams(js.Schema{js.Type("string")})})}
	if strict {
		s = append(s, js.NoAdditional([]string{name}))
	}
	return s
}

var (
	quotaQueryV21   = oneParamQuery("user_id", false)
	quotaQueryV275  = oneParamQuery("user_id", true)
	limitsQueryV21  = oneParamQuery("tenant_id", false)
	limitsQueryV275 = oneParamQuery("tenant_id", true)
)

func quotaQuerySchema(v Version) js.Schema {
	if v.AtLeast(2, 75) {
		return quotaQueryV275
	}
	return quotaQueryV21
}

func limitsQuerySchema(v Version) js.Schema {
	if v.AtLeast(2, 75) {
		return limitsQueryV275
	}
	return limitsQueryV21
}
