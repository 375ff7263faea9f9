package kernel

import (
	"sync"

	"marsfs/tensor"
)

// scratch keeps the buffers matmul ops draw blocks into, and those the
// members of a fused chain pass on (a store chunk read by from_zarr, 40 MB
// in bench's W7, on its way to the maps that reduce it), so that the next
// op writes to pages already mapped: touching fresh ones costs more than
// drawing the values, and a quarter of decoding them. The limit holds
// such a chunk for each of a worker's two slots, with room to spare.
var scratch = &scratchPool{Limit: 128 << 20}

// scratchSlack is the room past its end a scratch buffer has, so that a
// zstd frame decodes into it in place (the decoder writes a few bytes past
// the end of its output; zarr's zstdSlack).
const scratchSlack = 64

// ReleaseScratch drops the scratch buffers kept, for the collector: a
// process that goes quiet gives their memory back.
func ReleaseScratch() {
	scratch.mu.Lock()
	defer scratch.mu.Unlock()
	clear(scratch.Free)
	scratch.Free, scratch.Bytes = scratch.Free[:0], 0
}

// A scratchPool holds freed buffers up to limit bytes.
type scratchPool struct {
	mu    sync.Mutex
	Free  [][]byte
	Bytes int
	Limit int
}

// take returns an array of dtype dt and the given shape whose contents are
// undefined, with scratchSlack bytes of room past its end or more.
func (p *scratchPool) take(dt tensor.DType, shape []int) *tensor.Array {
	n := tensor.NumElements(shape) * dt.Size()
	p.mu.Lock()
	for i, b := range p.Free {
		if cap(b) >= n+scratchSlack {
			last := len(p.Free) - 1
			p.Free[i], p.Free[last] = p.Free[last], nil
			p.Free = p.Free[:last]
			p.Bytes -= cap(b)
			p.mu.Unlock()
			return &tensor.Array{DType: dt, Shape: append([]int(nil), shape...), Data: b[:n]}
		}
	}
	p.mu.Unlock()
	return &tensor.Array{DType: dt, Shape: append([]int(nil), shape...), Data: make([]byte, n, n+scratchSlack)}
}

// put gives a's buffer back to the pool, or to the collector when the
// pool is full.
func (p *scratchPool) put(a *tensor.Array) {
	b := a.Data[:cap(a.Data)]
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Bytes+cap(b) > p.Limit {
		return
	}
	p.Free = append(p.Free, b)
	p.Bytes += cap(b)
}
