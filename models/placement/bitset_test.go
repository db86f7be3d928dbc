package placement

import (
	"reflect"
	"testing"
)

func TestBitset(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 130} {
		b := NewBitset(n)
		b.Fill(n)
		if b.Count() != n {
			t.Errorf("Fill(%d) holds %d", n, b.Count())
		}
		if n > 3 {
			o := NewBitset(n)
			o.Set(1)
			o.Set(n - 1)
			b.AndNot(o)
			if b.Has(1) || b.Has(n-1) || !b.Has(0) || b.Count() != n-2 {
				t.Errorf("AndNot on %d: %v", n, b.Members())
			}
			c := o.Clone()
			c.Clear(1)
			if !o.Has(1) || c.Has(1) {
				t.Error("Clone shares storage")
			}
			b.Or(o)
			b.And(o)
			if !reflect.DeepEqual(b.Members(), []int{1, n - 1}) {
				t.Errorf("Or/And on %d: %v", n, b.Members())
			}
		}
	}
}
