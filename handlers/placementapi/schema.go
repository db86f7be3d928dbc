package placementapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/models/placement"
)

// Placement validates bodies with JSON schemas and reports the first
// error as jsonschema words it. The few schemas of the provider and
// aggregate APIs are small, so they are checked here by hand, in
// jsonschema's order (the shallowest error first: type, then required,
// then additionalProperties, then each property).

type kind uint8

const (
	kString kind = iota
	kUUID
	kUUIDOrNull
	kInteger
	kUUIDList // array of unique uuid strings
)

type prop struct {
	name   string
	kind   kind
	maxLen int
}

type objectSchema struct {
	props    []prop
	required []string
}

// readJSON reads the body of a write: Placement wants Content-Type
// application/json, and a body that parses.
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
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, badRequest("Malformed JSON: " + err.Error())
	}
	if dec.More() {
		return nil, badRequest("Malformed JSON: Extra data")
	}
	return v, nil
}

func invalid(format string, args ...any) *Error {
	return badRequest("JSON does not validate: " + fmt.Sprintf(format, args...))
}

// validateObject checks v against s and returns it as a map.
func validateObject(v any, s objectSchema) (map[string]any, *Error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("%s is not of type 'object'", pyRepr(v))
	}
	for _, r := range s.required {
		if _, ok := obj[r]; !ok {
			return nil, invalid("%s is a required property", pyRepr(r))
		}
	}
	var extra []string
	for k := range obj {
		known := false
		for _, p := range s.props {
			if p.name == k {
				known = true
				break
			}
		}
		if !known {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		quoted := make([]string, len(extra))
		for i, k := range extra {
			quoted[i] = pyRepr(k)
		}
		verb := "was"
		if len(extra) > 1 {
			verb = "were"
		}
		return nil, invalid("Additional properties are not allowed (%s %s unexpected)", strings.Join(quoted, ", "), verb)
	}
	for _, p := range s.props {
		val, ok := obj[p.name]
		if !ok {
			continue
		}
		if e := validateValue(val, p); e != nil {
			return nil, e
		}
	}
	return obj, nil
}

func validateValue(v any, p prop) *Error {
	switch p.kind {
	case kString, kUUID:
		s, ok := v.(string)
		if !ok {
			return invalid("%s is not of type 'string'", pyRepr(v))
		}
		if p.maxLen > 0 && len([]rune(s)) > p.maxLen {
			return invalid("%s is too long", pyRepr(v))
		}
		if p.kind == kUUID && !placement.IsUUIDLike(s) {
			return invalid("%s is not a 'uuid'", pyRepr(v))
		}
	case kUUIDOrNull:
		if v == nil {
			return nil
		}
		if s, ok := v.(string); !ok || !placement.IsUUIDLike(s) {
			return invalid("%s is not valid under any of the given schemas", pyRepr(v))
		}
	case kInteger:
		if _, ok := asInt(v); !ok {
			return invalid("%s is not of type 'integer'", pyRepr(v))
		}
	case kUUIDList:
		_, e := uuidList(v)
		return e
	}
	return nil
}

// uuidList validates Placement's aggregate list: an array of unique
// uuid-like strings, kept in the order given.
func uuidList(v any) ([]string, *Error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, invalid("%s is not of type 'array'", pyRepr(v))
	}
	out := make([]string, 0, len(arr))
	seen := map[string]bool{}
	for _, el := range arr {
		s, ok := el.(string)
		if ok && seen[s] {
			return nil, invalid("%s has non-unique elements", pyRepr(v))
		}
		seen[s] = true
		out = append(out, s)
	}
	for _, el := range arr {
		s, ok := el.(string)
		if !ok {
			return nil, invalid("%s is not of type 'string'", pyRepr(el))
		}
		// Placement's aggregate column holds 36 characters; longer spellings
		// that is_uuid_like accepts ("urn:uuid:…", braces) cannot be stored.
		if !placement.IsUUIDLike(s) || len(s) > 36 {
			return nil, invalid("%s is not a 'uuid'", pyRepr(el))
		}
	}
	return out, nil
}

// asInt reads a JSON integer (jsonschema also takes 3.0, but not true).
func asInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, false
	}
	return int64(f), true
}

// pyRepr renders a decoded JSON value as Python's repr would, since
// Placement's messages quote the offending value that way.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return string(x)
	case string:
		q := "'"
		if strings.Contains(x, "'") && !strings.Contains(x, `"`) {
			q = `"`
		}
		var b strings.Builder
		b.WriteString(q)
		for _, r := range x {
			switch {
			case r == '\\':
				b.WriteString(`\\`)
			case string(r) == q:
				b.WriteString(`\` + q)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\t':
				b.WriteString(`\t`)
			case r == '\r':
				b.WriteString(`\r`)
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\x%02x`, r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteString(q)
		return b.String()
	case []any:
		parts := make([]string, len(x))
		for i, el := range x {
			parts[i] = pyRepr(el)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
