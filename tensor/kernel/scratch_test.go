package kernel

import (
	"context"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// Drawn blocks go to buffers the next draws reuse, up to the pool's limit.
func TestScratchPoolReuses(t *testing.T) {
	p := &scratchPool{Limit: 1 << 20}
	a := p.take(tensor.Float64, []int{100, 100})
	first := &a.Data[0]
	p.put(a)
	b := p.take(tensor.Float64, []int{50, 100})
	if &b.Data[0] != first || b.Len() != 5000 || b.Shape[0] != 50 {
		t.Fatalf("took a new buffer of %d elements, want the freed one cut to 5000", b.Len())
	}
	big := p.take(tensor.Float64, []int{1 << 18}) // 2 MiB, past the limit
	p.put(big)
	p.put(b)
	if p.Bytes != 80000+scratchSlack || len(p.Free) != 1 {
		t.Fatalf("pool holds %d bytes in %d buffers, want the 80000 of the first and its slack", p.Bytes, len(p.Free))
	}
	if c := p.take(tensor.Float64, []int{10000}); &c.Data[0] != first || cap(c.Data)-len(c.Data) < scratchSlack {
		t.Fatalf("took a buffer of %d bytes past its end, want the freed one, with %d", cap(c.Data)-len(c.Data), scratchSlack)
	}
	ReleaseScratch()
	if scratch.Bytes != 0 || len(scratch.Free) != 0 {
		t.Fatalf("after ReleaseScratch the pool holds %d bytes", scratch.Bytes)
	}
	if _, err := Run(context.Background(), &chunk.Op{Kind: chunk.KindMatmul, Shape: []int{0, 0}, DType: tensor.Float64}, nil); err != nil {
		t.Fatalf("empty product: %v", err)
	}
}
