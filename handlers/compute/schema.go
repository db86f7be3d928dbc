package compute

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	js "corral/handlers/jsonschema"
	"corral/models/pycompat"
)

// Nova validates bodies and query strings with jsonschema (the Nova
// dialect: first error) and words the error as below.

// bodyMessage formats e like nova's validator does for request bodies.
func bodyMessage(e *js.Error) string {
	if e.BadName != "" {
		return "An invalid 'name' value was provided. The name must be: " + e.BadName
	}
	if len(e.Path) == 0 {
		return e.Msg
	}
	return fmt.Sprintf("Invalid input for field/attribute %s. Value: %s. %s",
		e.Path[len(e.Path)-1], pycompat.Str(e.Value), e.Msg)
}

// queryMessage formats e like nova's validator does for query strings,
// where the first path element is the parameter name.
func queryMessage(e *js.Error) string {
	if e.BadName != "" {
		return "An invalid 'name' value was provided. The name must be: " + e.BadName
	}
	if len(e.Path) == 0 {
		return e.Msg
	}
	return fmt.Sprintf("Invalid input for query parameters %s. Value: %s. %s",
		e.Path[0], pycompat.Str(e.Value), e.Msg)
}

// decodeBody parses a request body; an empty body is JSON null, which the
// schemas then refuse with "None is not of type 'object'".
func decodeBody(raw []byte) (any, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, nil
	}
	v, err := pycompat.DecodeJSON(raw)
	if err != nil {
		return nil, faultf(http.StatusBadRequest, "Malformed request body")
	}
	return v, nil
}

func validateBody(s js.Schema, raw []byte) (*pycompat.Object, error) {
	v, f := decodeBody(raw)
	if f != nil {
		return nil, f
	}
	if e := js.Nova.Validate(s, v); e != nil {
		return nil, faultf(http.StatusBadRequest, bodyMessage(e))
	}
	o, ok := v.(*pycompat.Object)
	if !ok { // every request schema requires an object; be safe anyway
		return nil, faultf(http.StatusBadRequest, "Malformed request body")
	}
	return o, nil
}

// queryObject presents a query string the way Nova's query schemas see it:
// each parameter a list of its values (parameters sorted, for stable
// messages).
func queryObject(q url.Values) *pycompat.Object {
	o := &pycompat.Object{Vals: map[string]any{}}
	for k := range q {
		o.Keys = append(o.Keys, k)
	}
	sort.Strings(o.Keys)
	for _, k := range o.Keys {
		vals := make([]any, len(q[k]))
		for i, s := range q[k] {
			vals[i] = s
		}
		o.Vals[k] = vals
	}
	return o
}

func validateQuery(s js.Schema, q url.Values) error {
	if e := js.Nova.Validate(s, queryObject(q)); e != nil {
		return faultf(http.StatusBadRequest, queryMessage(e))
	}
	return nil
}
