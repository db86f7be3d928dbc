package scheduling

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the trace as json.Marshal encodes it, byte for byte,
// without reflection: a preview's trace lists hundreds of providers and
// hosts, and encoding it through reflection cost as much as a fifth of
// the preview. A weight that JSON cannot carry (NaN, ±Inf) is
// json.Marshal's error. TestTraceJSONMatchesEncodingJSON holds the two
// encodings equal and fails when a field is added here but not there.
func (t *Trace) AppendJSON(dst []byte) ([]byte, error) {
	if t == nil {
		return append(dst, "null"...), nil
	}
	e := traceEncoder{b: dst}
	e.trace(t)
	if e.bad {
		// Let encoding/json say what it refuses.
		_, err := json.Marshal(t)
		return dst, err
	}
	return e.b, nil
}

type traceEncoder struct {
	b   []byte
	bad bool // a float JSON cannot carry
}

func (e *traceEncoder) key(first bool, name string) {
	if !first {
		e.b = append(e.b, ',')
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, name...)
	e.b = append(e.b, '"', ':')
}

func (e *traceEncoder) str(s string) { e.b = appendJSONString(e.b, s) }

// optStr writes a non-first string field that encoding/json's omitempty
// leaves out when empty.
func (e *traceEncoder) optStr(name, s string) {
	if s != "" {
		e.key(false, name)
		e.str(s)
	}
}

func (e *traceEncoder) int(n int) { e.b = strconv.AppendInt(e.b, int64(n), 10) }

func (e *traceEncoder) bool(v bool) { e.b = strconv.AppendBool(e.b, v) }

// float is encoding/json's float64 encoding (ES6 number formatting).
func (e *traceEncoder) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.bad = true
		e.b = append(e.b, '0')
		return
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		n := len(e.b)
		if n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

func (e *traceEncoder) strings(s []string) {
	if s == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i, v := range s {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(v)
	}
	e.b = append(e.b, ']')
}

func (e *traceEncoder) trace(t *Trace) {
	e.b = append(e.b, '{')
	e.key(true, "placement_query")
	e.str(t.PlacementQuery)
	e.key(false, "request_filters")
	if t.RequestFilters == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i, s := range t.RequestFilters {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, '{')
			e.key(true, "name")
			e.str(s.Name)
			e.key(false, "effect")
			e.str(s.Effect)
			e.key(false, "detail")
			e.str(s.Detail)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.key(false, "providers")
	if t.Providers == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range t.Providers {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.provider(&t.Providers[i])
		}
		e.b = append(e.b, ']')
	}
	e.key(false, "hosts")
	if t.Hosts == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range t.Hosts {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.host(&t.Hosts[i])
		}
		e.b = append(e.b, ']')
	}
	e.key(false, "summary")
	e.summary(&t.Summary)
	e.key(false, "truncated")
	e.bool(t.Truncated)
	e.key(false, "error")
	if t.Error == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.str(*t.Error)
	}
	if len(t.Selections) > 0 {
		e.key(false, "selections")
		e.strings(t.Selections)
	}
	if len(t.Groups) > 0 {
		e.key(false, "groups")
		e.b = append(e.b, '[')
		for i, g := range t.Groups {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, '{')
			e.key(true, "suffix")
			e.str(g.Suffix)
			if len(g.MemberOf) > 0 {
				e.key(false, "member_of")
				e.strings(g.MemberOf)
			}
			e.optStr("resources", g.Resources)
			if len(g.Required) > 0 {
				e.key(false, "required")
				e.strings(g.Required)
			}
			e.key(false, "hosts_excluded")
			e.int(g.HostsExcluded)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	if t.Nova != nil {
		e.key(false, "nova")
		b, err := json.Marshal(t.Nova) // small, and no floats
		if err != nil {
			e.bad = true
		}
		e.b = append(e.b, b...)
	}
	e.b = append(e.b, '}')
}

func (e *traceEncoder) provider(p *ProviderEntry) {
	e.b = append(e.b, '{')
	e.key(true, "uuid")
	e.str(p.UUID)
	e.key(false, "name")
	e.str(p.Name)
	e.key(false, "root")
	e.str(p.Root)
	e.key(false, "excluded")
	e.bool(p.Excluded)
	e.optStr("stage", p.Stage)
	e.optStr("reason", p.Reason)
	e.optStr("via", p.Via)
	e.b = append(e.b, '}')
}

func (e *traceEncoder) host(h *HostEntry) {
	e.b = append(e.b, '{')
	e.key(true, "uuid")
	e.str(h.UUID)
	e.key(false, "name")
	e.str(h.Name)
	e.key(false, "passed")
	e.bool(h.Passed)
	e.optStr("stage", h.Stage)
	e.optStr("reason", h.Reason)
	if h.Weight != nil {
		e.key(false, "weight")
		e.float(*h.Weight)
	}
	if h.Instances != 0 {
		e.key(false, "instances")
		e.int(h.Instances)
	}
	if h.Round != 0 {
		e.key(false, "round")
		e.int(h.Round)
	}
	e.key(false, "checks")
	if h.Checks == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range h.Checks {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			c := &h.Checks[i]
			e.b = append(e.b, '{')
			e.key(true, "stage")
			e.str(c.Stage)
			if c.Passed != nil {
				e.key(false, "passed")
				e.bool(*c.Passed)
			}
			e.optStr("reason", c.Reason)
			if c.Weight != nil {
				e.key(false, "weight")
				e.float(*c.Weight)
			}
			if c.Raw != nil {
				e.key(false, "raw")
				e.float(*c.Raw)
			}
			if c.Multiplier != nil {
				e.key(false, "multiplier")
				e.float(*c.Multiplier)
			}
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, '}')
}

func (e *traceEncoder) summary(s *Summary) {
	e.b = append(e.b, '{')
	e.key(true, "providers")
	e.int(s.Providers)
	e.key(false, "providers_excluded")
	e.int(s.ProvidersExcluded)
	e.key(false, "hosts")
	e.int(s.Hosts)
	e.key(false, "hosts_passed")
	e.int(s.HostsPassed)
	e.key(false, "stages")
	if s.Stages == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i, st := range s.Stages {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = append(e.b, '{')
			e.key(true, "stage")
			e.str(st.Stage)
			e.key(false, "excluded")
			e.int(st.Excluded)
			e.key(false, "hosts_excluded")
			e.int(st.HostsExcluded)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.key(false, "reasons")
	if s.Reasons == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range s.Reasons {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			g := &s.Reasons[i]
			e.b = append(e.b, '{')
			e.key(true, "stage")
			e.str(g.Stage)
			e.key(false, "reason")
			e.str(g.Reason)
			e.key(false, "count")
			e.int(g.Count)
			e.key(false, "examples")
			e.strings(g.Examples)
			e.b = append(e.b, '}')
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, '}')
}

const hexDigits = "0123456789abcdef"

// jsonPlain marks the ASCII bytes json.Marshal writes as they are: not a
// control character, quote, backslash, <, > or &.
var jsonPlain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendJSONString is encoding/json's string encoding with HTML escaping
// (what json.Marshal does): <, > and & as \u003c…, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if jsonPlain[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
