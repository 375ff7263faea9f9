package zarr

import (
	"errors"
	"fmt"
)

// A ChunkEncoder encodes a store chunk handed over a piece at a time, in
// order, each blosc block compressed as soon as its bytes are whole:
// a chunk made a block at a time (an expression over a streamed chunk,
// the anomaly x - m written with to_zarr) is encoded while its block is
// in cache, and is never whole in memory. The frame is bloscEncode's to
// the byte.
//
// A chunk that does not compress is stored copied by blosc, which needs
// the chunk whole: Finish then says ErrNotStreamed, and the caller
// encodes the chunk made whole (Encode).
type ChunkEncoder struct {
	l      bloscLayout
	e      *bloscEnc
	out    []byte // the frame so far
	staged int    // bytes of block b in e.stage, when a piece held part of it
	b      int    // the next block
	failed bool
}

// ErrNotStreamed says that a ChunkEncoder could not make the frame from
// its pieces (a chunk blosc stores copied): the caller encodes it whole.
var ErrNotStreamed = errors.New("zarr: the chunk does not compress; encode it whole")

// ChunkEncoder returns an encoder of one of a's chunks into dst's memory
// (from dst[:0], grown when short), or false when a's chunks are not
// encoded a block at a time (Blockwise says which, and a chunk blosc
// stores copied at once: level 0, too small).
func (a *Array) ChunkEncoder(dst []byte) (*ChunkEncoder, bool) {
	if !a.Blockwise() {
		return nil, false
	}
	c := a.Codecs[0]
	if c.Typesize == 0 {
		c.Typesize = a.DType.Size()
	}
	l, err := bloscLayoutOf(a.ChunkBytes(), c.Cname, c.Level, c.Shuffle, c.Typesize)
	if err != nil || !l.compresses() {
		return nil, false
	}
	w := &ChunkEncoder{l: l, e: getBloscEnc(l.bs)}
	w.out = grow(dst[:0], l.room())[:l.start()]
	return w, true
}

// Write appends p, the chunk's next bytes, compressing every block it
// completes; p is not kept.
func (w *ChunkEncoder) Write(p []byte) error {
	if w.e == nil {
		return fmt.Errorf("zarr: a chunk encoder written after Finish")
	}
	l := &w.l
	if w.b*l.bs+w.staged+len(p) > l.nbytes {
		return fmt.Errorf("zarr: %d bytes past the chunk's %d", w.b*l.bs+w.staged+len(p)-l.nbytes, l.nbytes)
	}
	for len(p) > 0 && !w.failed {
		n := min(l.bs, l.nbytes-w.b*l.bs) // this block's bytes
		if w.staged == 0 && len(p) >= n {
			// The block whole in the piece: compressed from it.
			if err := w.put(p[:n]); err != nil {
				return err
			}
			p = p[n:]
			continue
		}
		if cap(w.e.stage) < l.bs {
			w.e.stage = make([]byte, l.bs)
		}
		k := copy(w.e.stage[w.staged:n], p)
		w.staged += k
		p = p[k:]
		if w.staged == n {
			w.staged = 0
			if err := w.put(w.e.stage[:n]); err != nil {
				return err
			}
		}
	}
	return nil
}

// put compresses block w.b.
func (w *ChunkEncoder) put(block []byte) error {
	out, ok, err := w.l.putBlock(w.e, w.out, 0, w.b, block)
	if err != nil {
		return err
	}
	w.out = out
	w.failed = !ok
	w.b++
	return nil
}

// Finish returns the frame, once every byte of the chunk was written, or
// ErrNotStreamed. It is called in every case, once: the encoder's
// buffers go back to be reused.
func (w *ChunkEncoder) Finish() ([]byte, error) {
	if w.e == nil {
		return nil, fmt.Errorf("zarr: a chunk encoder finished twice")
	}
	bloscEncs.Put(w.e)
	w.e = nil
	if w.failed {
		return w.out[:0], ErrNotStreamed
	}
	if w.b != w.l.nblocks {
		return w.out[:0], fmt.Errorf("zarr: a chunk encoder finished after %d of %d bytes", min(w.b*w.l.bs, w.l.nbytes)+w.staged, w.l.nbytes)
	}
	w.l.header(w.out, true)
	return w.out, nil
}
