package pycompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Object is a dict as json.loads makes it: its keys in the order they
// first appeared, each with its last value.
type Object struct {
	Keys []string
	Vals map[string]any
}

// Get returns the value of key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.Vals[key]
	return v, ok
}

// Has reports whether key is present.
func (o *Object) Has(key string) bool { _, ok := o.Vals[key]; return ok }

// Int is a JSON number written without fraction or exponent, which
// json.loads reads as a Python int (of any size).
type Int struct{ Lit string }

// Int64 is the value of i when it fits.
func (i Int) Int64() (int64, bool) {
	n, err := strconv.ParseInt(i.Lit, 10, 64)
	return n, err == nil
}

// Float is any other JSON number (a Python float; too large is ±inf).
type Float float64

// ErrTrailingData is DecodeJSON's error for a document followed by more.
var ErrTrailingData = errors.New("extra data after the JSON document")

// DecodeJSON is json.loads: one JSON document into nil, bool, string, Int,
// Float, []any or *Object. Duplicate keys keep the last value, as Python
// does.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrTrailingData
	}
	return v, nil
}

var errBadToken = errors.New("unexpected JSON token")

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{Vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errBadToken
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.Vals[k]; !dup {
					o.Keys = append(o.Keys, k)
				}
				o.Vals[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, errBadToken
	case json.Number:
		s := string(t)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, err
			}
			return Float(f), nil
		}
		return Int{Lit: s}, nil
	default:
		return tok, nil // nil, bool, string
	}
}
