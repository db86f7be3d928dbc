package placementapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"

	"github.com/labstack/echo/v4"

	js "corral/handlers/jsonschema"
	"corral/models/placement"
	"corral/models/pycompat"
)

// Request body schemas, keyword for keyword in Placement's order
// (placement/schemas/{resource_provider,aggregate}.py). Placement checks
// them with jsonschema.validate, hence the Placement dialect (best_match).

// uuidFormat is Placement's "uuid" format: oslo's is_uuid_like.
var uuidFormat = js.Format("uuid", placement.IsUUIDLike)

func uuidString() js.Schema { return js.Schema{js.Type("string"), uuidFormat} }

// providerSchema is POST_RESOURCE_PROVIDER_SCHEMA (create) or
// PUT_RESOURCE_PROVIDER_SCHEMA, with parent_provider_uuid from 1.14.
func providerSchema(v placement.Version, create bool) js.Schema {
	props := []js.Prop{{Name: "name", Schema: js.Schema{js.Type("string"), js.MaxLength(200)}}}
	if create {
		props = append(props, js.Prop{Name: "uuid", Schema: uuidString()})
	}
	if v.AtLeast(14) {
		props = append(props, js.Prop{Name: "parent_provider_uuid",
			Schema: js.Schema{js.AnyOf(uuidString(), js.Schema{js.Type("null")})}})
	}
	names := make([]string, len(props))
	for i, p := range props {
		names[i] = p.Name
	}
	return js.Schema{js.Type("object"), js.Properties(props...), js.Required("name"), js.NoAdditional(names)}
}

var (
	// Placement's aggregate column holds 36 characters; longer spellings
	// that is_uuid_like accepts ("urn:uuid:…", braces) cannot be stored, so
	// corral refuses them as not a uuid.
	aggregateList = js.Schema{
		js.Type("array"),
		js.Items(js.Schema{js.Type("string"), js.Format("uuid", func(s string) bool {
			return placement.IsUUIDLike(s) && len(s) <= 36
		})}),
		js.UniqueItems(),
	}
	// aggregatesSchema119 is PUT_AGGREGATES_SCHEMA_V1_19.
	aggregatesSchema119 = js.Schema{
		js.Type("object"),
		js.Properties(
			js.Prop{Name: "aggregates", Schema: aggregateList},
			js.Prop{Name: "resource_provider_generation", Schema: js.Schema{js.Type("integer")}},
		),
		js.Required("aggregates", "resource_provider_generation"),
		js.NoAdditional([]string{"aggregates", "resource_provider_generation"}),
	}
)

// traitsSchema is SET_TRAITS_FOR_RP_SCHEMA (placement/schemas/trait.py),
// the body of PUT /resource_providers/{uuid}/traits (1.6+), which is not
// served yet.
var traitsSchema = js.Schema{
	js.Type("object"),
	js.Properties(
		js.Prop{Name: "traits", Schema: js.Schema{js.Type("array"), js.Items(js.Schema{js.Type("string"), js.MinLength(1), js.MaxLength(255)})}},
		js.Prop{Name: "resource_provider_generation", Schema: js.Schema{js.Type("integer")}},
	),
	js.Required("traits", "resource_provider_generation"),
	js.NoAdditional([]string{"traits", "resource_provider_generation"}),
}

// readJSON reads the body of a write: Placement wants Content-Type
// application/json, and a body that parses. The value is as json.loads
// returns it (pycompat values), for the schemas and their messages.
func readJSON(c echo.Context) (any, *Error) {
	req := c.Request()
	if mt := mediaType(req.Header.Get(echo.HeaderContentType)); mt != echo.MIMEApplicationJSON {
		if mt == "" {
			mt = "None"
		}
		return nil, &Error{Status: http.StatusUnsupportedMediaType,
			Msg: "The media type " + mt + " is not supported, use application/json"}
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	if err != nil {
		return nil, badRequest("Malformed JSON: " + err.Error())
	}
	if len(b) > maxBody {
		return nil, &Error{Status: http.StatusRequestEntityTooLarge, Msg: "Request is too large."}
	}
	// encoding/json words the syntax errors; the document it accepted is
	// then read again in order.
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if err = dec.Decode(&raw); err != nil {
		return nil, badRequest("Malformed JSON: " + err.Error())
	}
	if dec.More() {
		return nil, badRequest("Malformed JSON: Extra data")
	}
	v, err := pycompat.DecodeJSON(raw)
	if err != nil {
		return nil, badRequest("Malformed JSON: " + err.Error())
	}
	return v, nil
}

func invalid(format string, args ...any) *Error {
	return badRequest("JSON does not validate: " + fmt.Sprintf(format, args...))
}

// validateObject checks v against s, which requires an object, and
// returns it.
func validateObject(v any, s js.Schema) (*pycompat.Object, *Error) {
	if e := js.Placement.Validate(s, v); e != nil {
		return nil, invalid("%s", e.Msg)
	}
	return v.(*pycompat.Object), nil
}

// validateStrings checks v against s, which requires an array of strings,
// and returns them.
func validateStrings(v any, s js.Schema) ([]string, *Error) {
	if e := js.Placement.Validate(s, v); e != nil {
		return nil, invalid("%s", e.Msg)
	}
	arr := v.([]any)
	out := make([]string, len(arr))
	for i, x := range arr {
		out[i] = x.(string)
	}
	return out, nil
}

// asInt reads a schema-checked integer: a JSON integer, or a float
// without fraction (jsonschema's latest draft takes 3.0, but not true).
func asInt(v any) (int64, bool) {
	switch t := v.(type) {
	case pycompat.Int:
		return t.Int64()
	case pycompat.Float:
		f := float64(t)
		if f != math.Trunc(f) || math.Abs(f) > 1<<62 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}
