package compute

import (
	"bytes"
	"encoding/json"
)

// kv/doc build JSON objects whose keys come out in a fixed order, so the
// bodies read like Nova's and tests can compare them byte for byte.
type kv struct {
	K string
	V any
}

type doc []kv

func (d doc) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range d {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.K)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(p.V)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
