package placement

import "math/bits"

// Bitset is a fixed-size set of small integers (provider indexes). Set
// algebra over 100,000 providers is a few thousand word operations, which is
// what keeps one member_of evaluation in the low milliseconds.
type Bitset []uint64

// NewBitset returns an empty set able to hold 0..n-1.
func NewBitset(n int) Bitset { return make(Bitset, (n+63)/64) }

// Set adds i.
func (b Bitset) Set(i int) { b[i>>6] |= 1 << (uint(i) & 63) }

// Clear removes i.
func (b Bitset) Clear(i int) { b[i>>6] &^= 1 << (uint(i) & 63) }

// Has reports whether i is in the set.
func (b Bitset) Has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

// Fill adds 0..n-1.
func (b Bitset) Fill(n int) {
	for i := range b {
		b[i] = ^uint64(0)
	}
	if r := n & 63; r != 0 && len(b) > 0 {
		b[len(b)-1] = (1 << uint(r)) - 1
	}
}

// And keeps only what is also in o.
func (b Bitset) And(o Bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

// Or adds everything in o.
func (b Bitset) Or(o Bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

// AndNot removes everything in o.
func (b Bitset) AndNot(o Bitset) {
	for i := range b {
		b[i] &^= o[i]
	}
}

// Count returns the number of members.
func (b Bitset) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// Each calls f for every member in increasing order.
func (b Bitset) Each(f func(i int)) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			f(wi<<6 + t)
			w &= w - 1
		}
	}
}

// Members returns the members in increasing order.
func (b Bitset) Members() []int {
	out := make([]int, 0, b.Count())
	b.Each(func(i int) { out = append(out, i) })
	return out
}

// Clone returns an independent copy.
func (b Bitset) Clone() Bitset { return append(Bitset(nil), b...) }

// First returns up to n members in increasing order, appended to dst.
func (b Bitset) First(n int, dst []int) []int {
	for wi, w := range b {
		for w != 0 && n > 0 {
			t := bits.TrailingZeros64(w)
			dst = append(dst, wi<<6+t)
			w &= w - 1
			n--
		}
		if n == 0 {
			break
		}
	}
	return dst
}

// Min returns the smallest member, or -1 when the set is empty.
func (b Bitset) Min() int {
	for wi, w := range b {
		if w != 0 {
			return wi<<6 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// IsEmpty reports whether no member is set.
func (b Bitset) IsEmpty() bool { return b.Min() < 0 }
