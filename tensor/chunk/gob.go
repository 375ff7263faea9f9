package chunk

import (
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"marsfs/tensor"
	"math"
)

// The kernel argument types travel to worker processes inside Op.Args,
// an interface, which encoding/gob can decode only for types registered
// with it beforehand, in every process: so they are registered here, at
// initialization, all in one list.
func init() {
	for _, args := range []any{
		ConstArgs{}, GenArgs{}, AssembleArgs{}, SplitArgs{}, ElemArgs{}, ReduceArgs{}, ScanArgs{},
		TransposeArgs{}, ReshapeArgs{}, MatmulArgs{}, NPYArgs{}, ZarrArgs{}, NPYWriteArgs{}, ZarrWriteArgs{}, FuseArgs{}, ExprArgs{}, PartArgs{}, MapsArgs{}, LabelSumsArgs{}, GroupByArgs{},
		QRFactorArgs{}, QRQArgs{}, QRQTArgs{}, SVDPartArgs{}, SortArgs{},
		HistArgs{}, BincountArgs{}, PercentileArgs{}, UniqueArgs{}, BincountLenArgs{},
		DiagonalArgs{}, MaskArgs{}, EighArgs{}, TakeArgs{}, TakePieceArgs{}, SampleSortArgs{}, NonEmptyArgs{}, LookupArgs{},
	} {
		gob.Register(args)
	}
}

// GenArgs and ExprInstr are written by hand, their floats as their bits:
// gob leaves out a struct's fields that equal zero, and -0.0 does, so that
// a fill value of -0.0 would arrive as +0.0 (full((2,), -0.0),
// zeros(2) * -0.0). An ExprInstr is written so because its GenArgs is a
// field of it, which gob leaves out as a whole when it holds only -0.0.

// GobEncode writes a as GobDecode reads it.
func (a GenArgs) GobEncode() ([]byte, error) { return a.appendTo(nil), nil }

// GobDecode reads what GobEncode wrote.
func (a *GenArgs) GobDecode(b []byte) error {
	r := wireReader{b: b}
	r.gen(a)
	return r.end("GenArgs")
}

// GobEncode writes in as GobDecode reads it.
func (in ExprInstr) GobEncode() ([]byte, error) {
	b := appendString(nil, in.Op)
	b = appendString(b, in.Kind)
	b = binary.AppendVarint(b, int64(in.Dst))
	b = appendInts(b, in.Src)
	b = binary.AppendVarint(b, int64(in.Input))
	b = append(b, byte(in.DType), byte(in.Elem.Compute))
	b = binary.AppendVarint(b, int64(in.Elem.Decimals))
	b = in.Gen.appendTo(b)
	b = appendInts(b, in.Shape)
	return appendInts(b, in.Axes), nil
}

// GobDecode reads what GobEncode wrote.
func (in *ExprInstr) GobDecode(b []byte) error {
	r := wireReader{b: b}
	in.Op, in.Kind = r.string(), r.string()
	in.Dst = int(r.varint())
	in.Src = r.ints()
	in.Input = int(r.varint())
	in.DType, in.Elem.Compute = tensor.DType(r.byte()), tensor.DType(r.byte())
	in.Elem.Decimals = int(r.varint())
	r.gen(&in.Gen)
	in.Shape, in.Axes = r.ints(), r.ints()
	return r.end("ExprInstr")
}

func (a GenArgs) appendTo(b []byte) []byte {
	b = appendInts(b, a.Offset)
	b = appendInts(b, a.Global)
	for _, f := range []float64{a.Value, a.Start, a.Step} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	for _, v := range []int64{a.IntValue, a.Low, a.High, int64(a.K)} {
		b = binary.AppendVarint(b, v)
	}
	return binary.AppendUvarint(b, a.Seed)
}

func appendInts(b []byte, s []int) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	for _, v := range s {
		b = binary.AppendVarint(b, int64(v))
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// A wireReader reads what the append functions wrote; its first error
// sticks, and its reads after it give zeros.
type wireReader struct {
	b   []byte
	bad bool
}

func (r *wireReader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 || r.bad {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *wireReader) varint() int64 {
	v, k := binary.Varint(r.b)
	if k <= 0 || r.bad {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *wireReader) byte() byte {
	if len(r.b) < 1 || r.bad {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *wireReader) float() float64 {
	if len(r.b) < 8 || r.bad {
		r.bad = true
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return f
}

func (r *wireReader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) || r.bad {
		r.bad = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *wireReader) ints() []int {
	n := r.uvarint()
	if n > uint64(len(r.b)) || r.bad { // each takes a byte at least
		r.bad = true
		return nil
	}
	if n == 0 {
		return nil
	}
	s := make([]int, n)
	for i := range s {
		s[i] = int(r.varint())
	}
	return s
}

func (r *wireReader) gen(a *GenArgs) {
	a.Offset, a.Global = r.ints(), r.ints()
	a.Value, a.Start, a.Step = r.float(), r.float(), r.float()
	a.IntValue, a.Low, a.High = r.varint(), r.varint(), r.varint()
	a.K = int(r.varint())
	a.Seed = r.uvarint()
}

// end reports a read that failed or left bytes over.
func (r *wireReader) end(what string) error {
	if r.bad || len(r.b) != 0 {
		return fmt.Errorf("chunk: a %s cut short or overlong", what)
	}
	return nil
}
