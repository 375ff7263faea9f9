package tensor

import (
	"slices"
	"testing"
)

// TestNewArraySmall checks NewArray's arrays of one piece, and those beside
// them: zero-filled, valid, and with a shape and data that an append to
// one leaves the other alone.
func TestNewArraySmall(t *testing.T) {
	for _, c := range []struct {
		dt    DType
		shape []int
	}{
		{Float64, nil},
		{Float64, []int{4}},
		{Float64, []int{5}}, // over packedBytes: apart
		{Int32, []int{2, 3}},
		{Bool, []int{1, 1, 1}}, // three axes: apart
		{Float64, []int{0}},
	} {
		a := NewArray(c.dt, c.shape)
		if err := a.Check(); err != nil {
			t.Errorf("%v%v: %v", c.dt, c.shape, err)
			continue
		}
		if a.DType != c.dt || !slices.Equal(a.Shape, c.shape) {
			t.Errorf("NewArray(%v, %v) is %v%v", c.dt, c.shape, a.DType, a.Shape)
		}
		for i, b := range a.Data {
			if b != 0 {
				t.Errorf("%v%v: byte %d is %d, want 0", c.dt, c.shape, i, b)
			}
		}
		// Growing the shape or the data must not write into the other.
		before := slices.Clone(a.Data)
		_ = append(a.Shape, 7)
		if !slices.Equal(a.Data, before) {
			t.Errorf("%v%v: appending to the shape changed the data", c.dt, c.shape)
		}
		shape := slices.Clone(a.Shape)
		_ = append(a.Data, 1, 2, 3, 4, 5, 6, 7, 8)
		if !slices.Equal(a.Shape, shape) {
			t.Errorf("%v%v: appending to the data changed the shape", c.dt, c.shape)
		}
	}
}
