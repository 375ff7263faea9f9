package spec

import (
	"marsfs/tensor"
	"testing"
)

func TestParseDefaultChunks(t *testing.T) {
	const max = defaultChunkElems
	for _, shape := range [][]int{
		{100}, {100_000_000}, {max}, {max + 1}, {10_000, 10_000}, {3, 5000, 5000},
		{2, 3, 4}, {1 << 30, 2}, {7, 0, 5}, {}, {5000, 1 << 23},
	} {
		chunks, err := defaultChunks(shape)
		if err != nil {
			t.Errorf("%v: %v", shape, err)
			continue
		}
		if err := checkChunks(shape, chunks); err != nil {
			t.Errorf("%v: %v", shape, err)
		}
		elems := 1
		whole := true // axes after the cut one are whole
		for ax := len(shape) - 1; ax >= 0; ax-- {
			cs := chunks[ax]
			elems *= cs[0]
			if !whole && cs[0] != 1 {
				t.Errorf("%v: axis %d is cut into %v before a cut axis", shape, ax, cs)
			}
			if len(cs) > 1 {
				whole = false
			}
			for i, c := range cs[:len(cs)-1] {
				if c != cs[0] || cs[len(cs)-1] > cs[0] {
					t.Errorf("%v: axis %d chunks %v are not regular (at %d)", shape, ax, cs, i)
					break
				}
			}
		}
		if elems > max && tensor.NumElements(shape) > 0 && shape[len(shape)-1] <= max {
			t.Errorf("%v: chunks %v hold %d elements, more than %d", shape, chunks, elems, max)
		}
	}
	c, _ := defaultChunks([]int{100_000_000})
	if len(c[0]) != 24 {
		t.Errorf("1e8 elements: %d chunks, want 24", len(c[0]))
	}
	c, _ = defaultChunks([]int{10_000, 10_000})
	if len(c[1]) != 1 || c[0][0] != 417 {
		t.Errorf("10000x10000: chunks %v..., want rows of 417 and whole columns", c[0][:2])
	}
}
