package compute

// Request schemas of os-quota-sets and /limits
// (nova/api/openstack/compute/schemas/{quota_sets,limits}.py), keyword for
// keyword in Nova's order so the first error reported is Nova's.

import (
	"math"
	"math/big"
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
func commonQuota() Schema {
	return Schema{Type("integer", "string"), Pattern(`^-?[0-9]+$`), Minimum(-1), Maximum(math.MaxInt32)}
}

// booleanValues is parameter_types.boolean's enum, in its order.
var booleanValues = []any{
	true, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes",
	false, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no",
}

func booleanSchema() Schema {
	return Schema{Type("boolean", "string"), EnumValues(booleanValues...)}
}

// quotaUpdateSchema builds the PUT body schema without the resources
// hidden at v.
func quotaUpdateSchema(v Version) Schema {
	var props []Prop
	var names []string
	for _, r := range quotaResourcesInSchema {
		if quotaHiddenAt(v, r) {
			continue
		}
		props = append(props, Prop{r, commonQuota()})
		names = append(names, r)
	}
	props = append(props, Prop{"force", booleanSchema()})
	names = append(names, "force")
	return Schema{
		Type("object"),
		Properties(Prop{"quota_set", Schema{
			Type("object"),
			Properties(props...),
			NoAdditional(names),
		}}),
		Required("quota_set"),
		NoAdditional([]string{"quota_set"}),
	}
}

var (
	quotaUpdateV21  = quotaUpdateSchema(Version{2, 1})
	quotaUpdateV236 = quotaUpdateSchema(Version{2, 36})
	quotaUpdateV257 = quotaUpdateSchema(Version{2, 57})
)

func quotaUpdateSchemaFor(v Version) Schema {
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
func oneParamQuery(name string, strict bool) Schema {
	s := Schema{Type("object"), Properties(Prop{name, multiParams(Schema{Type("string")})})}
	if strict {
		s = append(s, NoAdditional([]string{name}))
	}
	return s
}

var (
	quotaQueryV21   = oneParamQuery("user_id", false)
	quotaQueryV275  = oneParamQuery("user_id", true)
	limitsQueryV21  = oneParamQuery("tenant_id", false)
	limitsQueryV275 = oneParamQuery("tenant_id", true)
)

func quotaQuerySchema(v Version) Schema {
	if v.AtLeast(2, 75) {
		return quotaQueryV275
	}
	return quotaQueryV21
}

func limitsQuerySchema(v Version) Schema {
	if v.AtLeast(2, 75) {
		return limitsQueryV275
	}
	return limitsQueryV21
}

// ---- keywords the server-group and aggregate schemas do not use

type maximumKW int64

// Maximum applies to numbers and, like Nova's validator, to strings that
// Python's int() or float() can read.
func Maximum(n int64) keyword { return maximumKW(n) }

func (m maximumKW) check(v any, path []string) *schemaError {
	n, ok := numberOf(v)
	if !ok {
		return nil
	}
	if n.Cmp(new(big.Float).SetInt64(int64(m))) > 0 {
		return fail(v, path, "%s is greater than the maximum of %d", reprNumber(v, n), int64(m))
	}
	return nil
}

type enumValuesKW []any

// EnumValues is enum over strings and booleans. As in jsonschema, a boolean
// only equals a boolean (1 is not True).
func EnumValues(values ...any) keyword { return enumValuesKW(values) }

func (e enumValuesKW) check(v any, path []string) *schemaError {
	for _, x := range e {
		switch t := x.(type) {
		case bool:
			if b, ok := v.(bool); ok && b == t {
				return nil
			}
		case string:
			if s, ok := v.(string); ok && s == t {
				return nil
			}
		}
	}
	return fail(v, path, "%s is not one of %s", pyRepr(v), pyRepr([]any(e)))
}
