package tensor

import (
	"fmt"
	"unsafe"
)

// Array is a dense n-dimensional array: one chunk, or a whole tensor gathered
// in one place. Data holds the elements in C order, little-endian, with no
// padding; bool elements are one byte each (0 or 1), as in NumPy.
//
// Data may alias memory the Array does not own (a shared-memory segment, a
// received buffer); the typed views below alias Data too. Kernels never
// modify their inputs.
type Array struct {
	DType DType
	Shape []int
	Data  []byte
}

// NewArray returns a zero-filled array of the given dtype and shape.
func NewArray(dt DType, shape []int) *Array {
	n := NumElements(shape) * dt.Size()
	if len(shape) > 2 || n > packedBytes {
		return &Array{DType: dt, Shape: append([]int(nil), shape...), Data: make([]byte, n)}
	}
	// Small: header, shape and data in one allocation. A graph of tiny
	// chunks makes one such array an op, and three allocations an op cost
	// more there than the op's work. The slices are capped, so that an
	// append to one never runs into the other.
	p := &packedArray{}
	p.a.DType = dt
	if len(shape) > 0 {
		copy(p.shape[:], shape)
		p.a.Shape = p.shape[:len(shape):len(shape)]
	}
	p.a.Data = p.data[:n:n]
	return &p.a
}

// packedArray is a small array in one allocation: at most two axes and
// packedBytes of data (a few scalars, or a partial of a reduction and its
// count).
type packedArray struct {
	a     Array
	shape [2]int
	data  [packedBytes]byte // 8-byte aligned: it follows the ints
}

const packedBytes = 32

// NumElements is the product of shape (1 for a 0-d shape).
func NumElements(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// Len is the number of elements of a.
func (a *Array) Len() int { return NumElements(a.Shape) }

// NBytes is the size of a's data in bytes.
func (a *Array) NBytes() int { return a.Len() * a.DType.Size() }

// Check reports whether a's data length agrees with its dtype and shape.
func (a *Array) Check() error {
	if !a.DType.Valid() {
		return fmt.Errorf("array: invalid dtype %v", a.DType)
	}
	for _, s := range a.Shape {
		if s < 0 {
			return fmt.Errorf("array: negative dimension in shape %v", a.Shape)
		}
	}
	if len(a.Data) != a.NBytes() {
		return fmt.Errorf("array: %d bytes of data for %v%v (want %d)", len(a.Data), a.DType, a.Shape, a.NBytes())
	}
	return nil
}

func View[T any](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Bools views a bool array's data; the bytes are 0 or 1.
func (a *Array) Bools() []bool { return View[bool](a.Data) }

// Int32s views an int32 array's data.
func (a *Array) Int32s() []int32 { return View[int32](a.Data) }

// Int64s views an int64 array's data.
func (a *Array) Int64s() []int64 { return View[int64](a.Data) }

// Float32s views a float32 array's data.
func (a *Array) Float32s() []float32 { return View[float32](a.Data) }

// Float64s views a float64 array's data.
func (a *Array) Float64s() []float64 { return View[float64](a.Data) }

// Int8s views an int8 array's data.
func (a *Array) Int8s() []int8 { return View[int8](a.Data) }

// Int16s views an int16 array's data.
func (a *Array) Int16s() []int16 { return View[int16](a.Data) }

// Uint8s views a uint8 array's data.
func (a *Array) Uint8s() []uint8 { return a.Data }

// Uint16s views a uint16 array's data.
func (a *Array) Uint16s() []uint16 { return View[uint16](a.Data) }

// Uint32s views a uint32 array's data.
func (a *Array) Uint32s() []uint32 { return View[uint32](a.Data) }

// Uint64s views a uint64 array's data.
func (a *Array) Uint64s() []uint64 { return View[uint64](a.Data) }

// Halves views a float16 array's data.
func (a *Array) Halves() []Half { return View[Half](a.Data) }

// Float64At returns element i (in C order) converted to float64, for tests and
// text rendering; kernels use the typed views.
func (a *Array) Float64At(i int) float64 {
	switch a.DType {
	case Bool:
		if a.Data[i] != 0 {
			return 1
		}
		return 0
	case Int32:
		return float64(a.Int32s()[i])
	case Int64:
		return float64(a.Int64s()[i])
	case Float32:
		return float64(a.Float32s()[i])
	case Float64:
		return a.Float64s()[i]
	case Int8:
		return float64(a.Int8s()[i])
	case Int16:
		return float64(a.Int16s()[i])
	case Uint8:
		return float64(a.Data[i])
	case Uint16:
		return float64(a.Uint16s()[i])
	case Uint32:
		return float64(a.Uint32s()[i])
	case Uint64:
		return float64(a.Uint64s()[i])
	case Float16:
		return float64(a.Halves()[i].Float32())
	}
	panic("tensor: Float64At on invalid dtype")
}
