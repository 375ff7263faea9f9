package tensor

import "testing"

// TestSlabsLocate walks every element of tensors cut in ragged chunks and
// checks, against the C-order index of the chunk grid, that Locate names
// the chunk and the offset in it that hold the element, and that the run
// it reports stays in one chunk row and is contiguous in the tensor.
func TestSlabsLocate(t *testing.T) {
	tests := []struct {
		shape  []int
		chunks [][]int
	}{
		{[]int{10}, [][]int{{3, 3, 3, 1}}},
		{[]int{7, 5}, [][]int{{4, 3}, {2, 2, 1}}},
		{[]int{3, 4, 6}, [][]int{{1, 2}, {3, 1}, {4, 2}}},
		{[]int{3, 4, 6}, [][]int{{1, 2}, {3, 1}, {6}}},
		{[]int{2, 3, 4, 5}, [][]int{{2}, {1, 1, 1}, {4}, {2, 3}}},
		{[]int{}, [][]int{}},
	}
	for _, tt := range tests {
		s := NewSlabs(tt.shape, tt.chunks)
		grid := GridShape(tt.chunks)
		offs := ChunkOffsets(tt.chunks)
		if got, want := s.Ends[len(s.Ends)-1], NumElements(tt.shape); got != want {
			t.Fatalf("%v: slabs end at %d, want %d", tt.shape, got, want)
		}
		idx := make([]int, len(tt.shape))
		for e := range NumElements(tt.shape) {
			UnravelInto(idx, e, tt.shape)
			i := s.Find(e)
			part, at, run := s.Locate(i, e-s.Start(i))
			cidx := Unravel(i*s.Inner+part, grid)
			shape, start := ChunkBox(tt.chunks, offs, cidx)
			in := make([]int, len(idx))
			for ax := range idx {
				in[ax] = idx[ax] - start[ax]
				if in[ax] < 0 || in[ax] >= shape[ax] {
					t.Fatalf("%v %v: element %v located in chunk %v, which spans %v from %v", tt.shape, tt.chunks, idx, cidx, shape, start)
				}
			}
			if len(in) > 0 && Ravel(in, shape) != at {
				t.Fatalf("%v %v: element %v at %d of chunk %v, want %d", tt.shape, tt.chunks, idx, at, cidx, Ravel(in, shape))
			}
			if run < 1 || e+run > s.Ends[i] {
				t.Fatalf("%v %v: element %v runs %d elements", tt.shape, tt.chunks, idx, run)
			}
		}
	}
}
