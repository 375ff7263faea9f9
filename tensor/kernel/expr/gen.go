package expr

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// Generators inside expr programs fill a register segment by segment: a
// segment is a run of elements whose global flat indices step by a fixed
// amount. Each computes exactly what its own kernel (create.go, random.go)
// computes for the same global index, in the same dtype, so a fused
// generator's values are bit-identical to the materialized chunk's.

// A genFill writes the values of global indices g, g+step, ... into
// elements pos..pos+n-1 of dst.
type genFill func(dst []byte, pos, n, g, step int)

// newGenFill checks a gen instruction, whose chunk lies at offset in its
// tensor, against the value shape and returns its fill function and the
// global strides and base index of the value shape's elements.
func newGenFill(ins *chunk.ExprInstr, shape, offset []int) (genFill, []int, int, error) {
	a := ins.Gen
	if len(a.Offset) != 0 {
		return nil, nil, 0, fmt.Errorf("offset %v in the instruction, not in the op's offsets", a.Offset)
	}
	a.Offset = offset
	if len(a.Offset) != len(shape) || len(a.Global) != len(shape) {
		return nil, nil, 0, fmt.Errorf("offset %v and shape %v do not match chunk shape %v", a.Offset, a.Global, shape)
	}
	if err := checkExprShape(a.Global); err != nil {
		return nil, nil, 0, err
	}
	for ax, s := range shape {
		if a.Offset[ax] < 0 || a.Offset[ax]+s > a.Global[ax] {
			return nil, nil, 0, fmt.Errorf("chunk %v at %v lies outside %v", shape, a.Offset, a.Global)
		}
	}
	strides := make([]int, len(shape))
	base, s := 0, 1
	for ax := len(shape) - 1; ax >= 0; ax-- {
		strides[ax] = s
		base += a.Offset[ax] * s
		s *= a.Global[ax]
	}
	want := chunk.GenNative(ins.Kind, ins.DType)
	if ins.Kind == tensor.OpArange && (ins.DType == tensor.Int64 || ins.DType == tensor.Float32 || ins.DType == tensor.Float64) {
		want = ins.DType
	}
	if ins.DType != want {
		return nil, nil, 0, fmt.Errorf("%s does not compute in %v", ins.Kind, ins.DType)
	}
	var f genFill
	switch ins.Kind {
	case tensor.OpRand, tensor.OpUniform, tensor.OpRandn, tensor.OpNormal:
		f = randomFill(ins.Kind, a)
		if ins.Kind == tensor.OpNormal && a.Step < 0 {
			return nil, nil, 0, fmt.Errorf("normal: scale %v < 0", a.Step)
		}
	case tensor.OpRandint:
		if a.High <= a.Low {
			return nil, nil, 0, fmt.Errorf("randint: low %d >= high %d", a.Low, a.High)
		}
		f = randintFill(a)
	case tensor.OpArange, tensor.OpLinspace:
		if len(shape) != 1 {
			return nil, nil, 0, fmt.Errorf("shape %v is not 1-D", shape)
		}
		f = rangeFill(ins.Kind, ins.DType, a)
	case tensor.OpEye:
		if len(shape) != 2 {
			return nil, nil, 0, fmt.Errorf("eye chunk %v is not 2-D", shape)
		}
		f = eyeFill(ins.DType, a)
	default:
		return nil, nil, 0, fmt.Errorf("unknown generator")
	}
	return f, strides, base, nil
}

func randomFill(kind string, a chunk.GenArgs) genFill {
	s := elem.NewRandStream(a.Seed, 0)
	// As randomKernel: rand and randn are uniform and normal with (0, 1).
	loc, scale := 0.0, 1.0
	switch kind {
	case tensor.OpUniform:
		loc, scale = a.Start, a.Step-a.Start
	case tensor.OpNormal:
		loc, scale = a.Start, a.Step
	}
	if kind == tensor.OpRandn || kind == tensor.OpNormal {
		return func(dst []byte, pos, n, g, step int) {
			d := tensor.View[float64](dst)[pos : pos+n]
			for j := range d {
				d[j] = loc + scale*s.Normal(uint64(g+j*step))
			}
		}
	}
	plain := kind == tensor.OpRand
	return func(dst []byte, pos, n, g, step int) {
		d := tensor.View[float64](dst)[pos : pos+n]
		if step != 1 {
			for j := range d {
				d[j] = loc + scale*s.Uniform(uint64(g+j*step))
			}
			return
		}
		UniformFill(d, s, uint64(g))
		if !plain {
			for j, v := range d {
				d[j] = loc + scale*v
			}
		}
	}
}

// UniformFill sets d[j] to s.uniform(c+j). The counter's product with the
// golden increment advances by addition (the same value modulo 2^64), and
// a 53-bit integer converts to float64 exactly through int64, which avoids
// the unsigned conversion's branch: the values are those of s.uniform bit
// for bit. (rand's 0 + 1*x is x itself, as x >= 0.)
func UniformFill(d []float64, s elem.RandStream, c uint64) {
	n := uniformWide(d, s, c)
	d, c = d[n:], c+uint64(n)
	const m1, m2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
	const unit = 1.0 / (1 << 53)
	z := c*elem.Golden + s.K
	g := uint64(elem.Golden)
	for j := range d {
		x := z
		z += g
		x = (x ^ x>>30) * m1
		x = (x ^ x>>27) * m2
		d[j] = float64(int64((x^x>>31)>>11)) * unit
	}
}

func randintFill(a chunk.GenArgs) genFill {
	width := uint64(a.High - a.Low)
	streams := make([]elem.RandStream, elem.MaxRetries)
	for j := range streams {
		streams[j] = elem.NewRandStream(a.Seed, uint64(j))
	}
	return func(dst []byte, pos, n, g, step int) {
		d := tensor.View[int64](dst)[pos : pos+n]
		for j := range d {
			d[j] = a.Low + int64(elem.Intn(streams, uint64(g+j*step), width))
		}
	}
}

// rangeFill computes arange and linspace as rangeKernel does: integer
// aranges step in int64, float32 ones in float32, the rest in float64.
func rangeFill(kind string, dt tensor.DType, a chunk.GenArgs) genFill {
	switch {
	case kind == tensor.OpArange && dt == tensor.Int64:
		start := int64(a.Start)
		step := int64(a.Start+a.Step) - start
		return func(dst []byte, pos, n, g, gs int) {
			d := tensor.View[int64](dst)[pos : pos+n]
			for j := range d {
				d[j] = start + int64(g+j*gs)*step
			}
		}
	case kind == tensor.OpArange && dt == tensor.Float32:
		start := float32(a.Start)
		delta := float32(a.Start+a.Step) - start
		return func(dst []byte, pos, n, g, gs int) {
			d := tensor.View[float32](dst)[pos : pos+n]
			for j := range d {
				d[j] = start + float32(g+j*gs)*delta
			}
		}
	}
	delta := a.Step
	if kind == tensor.OpArange {
		delta = (a.Start + a.Step) - a.Start
	}
	return func(dst []byte, pos, n, g, gs int) {
		d := tensor.View[float64](dst)[pos : pos+n]
		for j := range d {
			d[j] = a.Start + float64(g+j*gs)*delta
		}
	}
}

// eyeFill sets the elements on diagonal K to one, the others to zero.
func eyeFill(dt tensor.DType, a chunk.GenArgs) genFill {
	one := elem.CastArray(&tensor.Array{DType: tensor.Float64, Shape: []int{1}, Data: elem.Float64Bytes([]float64{1})}, dt).Data
	es := dt.Size()
	cols := a.Global[1]
	return func(dst []byte, pos, n, g, step int) {
		d := dst[pos*es : (pos+n)*es]
		clear(d)
		if cols == 0 {
			return
		}
		for j := range n {
			gi := g + j*step
			if gi/cols+a.K == gi%cols {
				copy(d[j*es:], one)
			}
		}
	}
}
