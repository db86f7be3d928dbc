package account

import (
	"encoding/json"
	"sort"
)

// AuditFilter is the audit page's filter form, as submitted.
type AuditFilter struct {
	Actor, ObjectType, ObjectID string
	Since, Until                string // datetime-local values, UTC
	Errors                      map[string]string
	Actors                      []string // offered in the "who" field
}

// AuditObjectTypes are the object types the store records, offered in the
// filter form.
var AuditObjectTypes = []string{
	"aggregate", "provider", "flavor", "server", "server_group", "quota",
	"settings", "user", "token", "world", "draft", "session_keys",
}

// Change is one key whose value differs between an audit event's before and
// after documents. A missing side is "".
type Change struct {
	Key, Before, After string
}

// Changes lists, key by key, how after differs from before. Both are the
// JSON documents the store records; when either is not a JSON object the
// whole documents are compared as one change under the key "".
func Changes(before, after string) []Change {
	if before == after {
		return nil
	}
	b, okB := object(before)
	a, okA := object(after)
	if !okB || !okA {
		return []Change{{Before: before, After: after}}
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range b {
		keys = append(keys, k)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []Change
	for _, k := range keys {
		bv, av := compact(b[k]), compact(a[k])
		if bv != av {
			out = append(out, Change{Key: k, Before: bv, After: av})
		}
	}
	return out
}

// object decodes a JSON object; "" and "null" are the empty object, so that
// a creation shows every field as added and a deletion as removed.
func object(s string) (map[string]json.RawMessage, bool) {
	if s == "" || s == "null" {
		return map[string]json.RawMessage{}, true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func compact(r json.RawMessage) string {
	if r == nil {
		return ""
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	var v any
	if json.Unmarshal(r, &v) != nil {
		return string(r)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
