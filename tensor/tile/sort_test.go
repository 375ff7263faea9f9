package tile

import (
	"slices"
	"testing"
)

// TestBatcherNetwork checks the network on all 0-1 inputs of up to 12 wires,
// and its size for 16 wires (63 comparators).
func TestBatcherNetwork(t *testing.T) {
	for p := 1; p <= 12; p++ {
		net := batcherNetwork(p)
		for bits := 0; bits < 1<<p; bits++ {
			v := make([]int, p)
			for i := range v {
				v[i] = bits >> i & 1
			}
			for _, c := range net {
				if v[c[0]] > v[c[1]] {
					v[c[0]], v[c[1]] = v[c[1]], v[c[0]]
				}
			}
			if !slices.IsSorted(v) {
				t.Fatalf("p = %d: input %b gives %v", p, bits, v)
			}
		}
	}
	if n := len(batcherNetwork(16)); n != 63 {
		t.Errorf("16 wires: %d comparators, want 63", n)
	}
}
