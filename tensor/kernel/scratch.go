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
	clear(scratch.Free)
	scratch.Free, scratch.Bytes = scratch.Free[:0], 0
	scratch.mu.Unlock()
	zarrKept.release()
	f64Kept.release()
}

// A keptList holds up to max values of T (a kernel's reused buffers)
// from one op to the next. Unlike a sync.Pool, a collection does not
// empty it: the buffers of a store chunk's read are megabytes, and made
// again after every collection they were fresh pages each time, which
// cost more to touch than the decoder takes to fill them (and their
// allocation brought the next collection sooner). ReleaseScratch empties
// it when the process goes quiet.
type keptList[T any] struct {
	mu   sync.Mutex
	free []T
	max  int
}

// get returns a kept value, or ok false when there is none.
func (k *keptList[T]) get() (v T, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := len(k.free)
	if n == 0 {
		return v, false
	}
	v = k.free[n-1]
	var zero T
	k.free[n-1] = zero // the list no longer holds it
	k.free = k.free[:n-1]
	return v, true
}

// put keeps v, unless max values are kept already.
func (k *keptList[T]) put(v T) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.free) < k.max {
		k.free = append(k.free, v)
	}
}

func (k *keptList[T]) release() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.free)
	k.free = k.free[:0]
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
