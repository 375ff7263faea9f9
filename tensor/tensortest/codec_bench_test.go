package tensortest

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/codec"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

func benchArray(n int) *tensor.Array {
	a := tensor.NewArray(tensor.Float64, []int{n / 1000, 1000})
	r := rand.New(rand.NewPCG(1, 1))
	for i := range a.Float64s() {
		a.Float64s()[i] = r.NormFloat64()
	}
	return a
}

func BenchmarkReadNPY(b *testing.B) {
	a := benchArray(1 << 20) // 8 MiB
	var buf bytes.Buffer
	if err := codec.WriteNPY(&buf, a); err != nil {
		b.Fatal(err)
	}
	raw := buf.Bytes()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := codec.ReadNPY(bytes.NewReader(raw), 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteCSV(b *testing.B) {
	a := benchArray(100_000)
	b.SetBytes(int64(a.NBytes()))
	for b.Loop() {
		if err := codec.WriteCSV(io.Discard, a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormatTextSummarized(b *testing.B) {
	a := benchArray(1 << 20)
	for b.Loop() {
		codec.FormatText(a)
	}
}

func BenchmarkConstGraph(b *testing.B) {
	a := benchArray(1 << 20)
	chunks := [][]int{spec.RegularChunks(a.Shape[0], 100), spec.RegularChunks(a.Shape[1], 250)}
	b.SetBytes(int64(a.NBytes()))
	for b.Loop() {
		if _, err := tile.Const("x", a, chunks); err != nil {
			b.Fatal(err)
		}
	}
}
