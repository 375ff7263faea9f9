package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"marsfs/exec/core"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// chunkStore is a Runner that only holds chunks.
type chunkStore map[uint64]*tensor.Array

func (m chunkStore) Run(context.Context, *core.Job) error { return errors.New("cannot run") }
func (m chunkStore) Where(uint64) string                  { return "" }
func (m chunkStore) Free([]uint64)                        {}
func (m chunkStore) Put(context.Context, uint64, *tensor.Array) error {
	return errors.New("cannot put")
}
func (m chunkStore) Fetch(_ context.Context, id uint64) (*tensor.Array, func(), error) {
	a, ok := m[id]
	if !ok {
		return nil, nil, errors.New("no such chunk")
	}
	return a, func() {}, nil
}

// heldStore is a chunkStore that counts the chunks fetched and not yet
// released, and the most held at once.
type heldStore struct {
	chunkStore
	held, most int
}

func (h *heldStore) Fetch(ctx context.Context, id uint64) (*tensor.Array, func(), error) {
	a, _, err := h.chunkStore.Fetch(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	h.held++
	h.most = max(h.most, h.held)
	released := false
	return a, func() {
		if released {
			panic("released twice")
		}
		released = true
		h.held--
	}, nil
}

// byIndex reads a store's chunks by their index in a tensor's chunk grid,
// as engine.Tensor.Chunk does.
type byIndex struct {
	fetch func(context.Context, uint64) (*tensor.Array, func(), error)
	keys  []uint64
}

func (b byIndex) Chunk(ctx context.Context, i int) (*tensor.Array, func(), error) {
	return b.fetch(ctx, b.keys[i])
}

// tiled cuts a random int32 array of the given shape into the chunks given.
func tiled(t *testing.T, r *rand.Rand, shape []int, chunks [][]int) (*tensor.Array, *tensor.TiledTensor, chunkStore) {
	whole := tensor.NewArray(tensor.Int32, shape)
	for i := range whole.Int32s() {
		whole.Int32s()[i] = r.Int32()
	}
	tt := &tensor.TiledTensor{Name: "x", Shape: shape, DType: tensor.Int32, Chunks: chunks}
	store := chunkStore{}
	grid := tensor.GridShape(chunks)
	offs := tensor.ChunkOffsets(chunks)
	n := tensor.NumElements(grid)
	for k := range n {
		// Grid index of chunk k, C order.
		idx := make([]int, len(grid))
		for ax, rem := len(grid)-1, k; ax >= 0; ax-- {
			idx[ax] = rem % grid[ax]
			rem /= grid[ax]
		}
		cs := make([]int, len(grid))
		for ax := range grid {
			cs[ax] = chunks[ax][idx[ax]]
		}
		c := tensor.NewArray(tensor.Int32, cs)
		for e := range c.Len() {
			// Element e of the chunk, as an index into whole.
			flat, stride := 0, 1
			for ax, rem := len(cs)-1, e; ax >= 0; ax-- {
				flat += (offs[ax][idx[ax]] + rem%cs[ax]) * stride
				stride *= shape[ax]
				rem /= cs[ax]
			}
			c.Int32s()[e] = whole.Int32s()[flat]
		}
		id := uint64(100 + k)
		store[id] = c
		tt.Keys = append(tt.Keys, id)
	}
	return whole, tt, store
}

func TestStream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		shape  []int
		chunks [][]int
	}{
		{[]int{10}, [][]int{{3, 3, 3, 1}}},
		{[]int{7, 5}, [][]int{{2, 2, 3}, {5}}},
		{[]int{7, 5}, [][]int{{4, 3}, {2, 2, 1}}},
		{[]int{3, 4, 6}, [][]int{{1, 2}, {3, 1}, {4, 2}}},
		{[]int{3, 4, 6}, [][]int{{1, 2}, {3, 1}, {6}}},
		{[]int{2, 3, 4, 5}, [][]int{{1, 1}, {3}, {1, 3}, {5}}},
		{[]int{2, 3, 4, 5}, [][]int{{2}, {1, 1, 1}, {4}, {2, 3}}},
		{[]int{0, 4}, [][]int{{}, {4}}},
		{[]int{4, 0}, [][]int{{2, 2}, {}}},
		{[]int{}, [][]int{}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &conn{ctx: ctx}
	for _, tt := range tests {
		whole, ti, store := tiled(t, r, tt.shape, tt.chunks)
		prefix := []byte("HEADER")
		want := append(append([]byte{}, prefix...), whole.Data...)
		hs := &heldStore{chunkStore: store}
		st := newStream(c, byIndex{hs.Fetch, ti.Keys}, ti, prefix)
		got, err := io.ReadAll(io.NewSectionReader(st, 0, 1<<40))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%v in %v: read %d bytes (%v), want %d", tt.shape, tt.chunks, len(got), err, len(want))
			continue
		}
		// A reader holds the chunks of one slab at most.
		if hs.most > max(1, st.slabs.Inner) {
			t.Errorf("%v in %v: %d chunks held at once, a slab has %d", tt.shape, tt.chunks, hs.most, st.slabs.Inner)
		}
		for range 50 {
			off := r.IntN(len(want) + 2)
			p := make([]byte, r.IntN(len(want)+3))
			n, err := st.ReadAt(p, int64(off))
			end := min(off+len(p), len(want))
			if off > len(want) {
				end = off
			}
			if n != end-off || !bytes.Equal(p[:n], want[off:end]) || (n < len(p)) != (err == io.EOF) {
				t.Errorf("%v in %v: ReadAt(%d bytes, %d) = %d, %v", tt.shape, tt.chunks, len(p), off, n, err)
				break
			}
		}
		st.Close()
		if hs.held != 0 {
			t.Errorf("%v in %v: %d chunks held after close", tt.shape, tt.chunks, hs.held)
		}
	}
}

func TestCSVStream(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &conn{ctx: ctx}
	for _, tt := range []struct {
		shape  []int
		chunks [][]int
	}{
		{[]int{10}, [][]int{{3, 3, 3, 1}}},
		{[]int{7, 5}, [][]int{{4, 3}, {2, 2, 1}}},
		{[]int{5, 3}, [][]int{{5}, {3}}},
		{[]int{0, 3}, [][]int{{}, {3}}},
	} {
		whole, ti, store := tiled(t, r, tt.shape, tt.chunks)
		var want bytes.Buffer
		if err := codec.WriteCSV(&want, whole); err != nil {
			t.Fatal(err)
		}
		cs := &csvStream{st: newStream(c, byIndex{store.Fetch, ti.Keys}, ti, nil)}
		got, err := io.ReadAll(io.NewSectionReader(cs, 0, 1<<40))
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%v in %v: csv\n%s\nwant\n%s", tt.shape, tt.chunks, got, want.Bytes())
			continue
		}
		w := want.Bytes()
		for range 50 { // at random offsets, backwards too
			off := r.IntN(len(w) + 1)
			p := make([]byte, r.IntN(len(w)+2))
			n, _ := cs.ReadAt(p, int64(off))
			if end := min(off+len(p), len(w)); n != end-off || !bytes.Equal(p[:n], w[off:end]) {
				t.Errorf("%v in %v: ReadAt(%d bytes, %d) = %d bytes", tt.shape, tt.chunks, len(p), off, n)
				break
			}
		}
	}
}
