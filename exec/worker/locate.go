package worker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// A process on the worker's host reads a chunk in shared memory by mapping
// the chunk's file read-only rather than fetching it over TCP. It asks the
// worker where the chunk lives over a locate connection: the client sends a
// chunk ID (8 bytes, big-endian); the worker answers with a status byte (and
// error text), then its host's boot ID and the chunk file's path, each as a
// 2-byte length and the bytes (an empty boot ID: the worker has no files to
// map). The reader maps the file only when the boot ID is its own and the
// file names the chunk in its header.

// serveLocate answers a locate connection's requests until it closes.
func (w *Worker) serveLocate(c net.Conn, br *bufio.Reader) {
	ps, _ := w.store.(PathStore)
	bw := bufio.NewWriter(c)
	var id [8]byte
	for {
		if _, err := io.ReadFull(br, id[:]); err != nil {
			return
		}
		// Without files to map, ever, the worker answers an empty boot ID.
		var boot, path string
		if ps != nil && wire.BootID() != "" {
			boot = wire.BootID()
			var ok bool
			if path, ok = ps.Path(wire.GetID(id[:])); !ok {
				boot = ""
			}
		}
		var err error
		if boot == "" && ps != nil && wire.BootID() != "" {
			err = wire.WriteErr(bw, fmt.Sprintf("worker %s has no file for chunk %d", w.name, wire.GetID(id[:])))
		} else {
			bw.WriteByte(0)
			wire.WriteString(bw, boot)
			err = wire.WriteString(bw, path)
		}
		if err != nil || bw.Flush() != nil {
			return
		}
	}
}

// fetchInput reads input chunk loc.ID of a task from the worker serving at
// addr: by mapping it when that worker shares this host, adding to *pins
// what unmaps it, else over TCP.
//
// Of a chunk it reads only the part r (chunk.Range): a mapped chunk is
// sliced, and over TCP only the part travels.
func (w *Worker) fetchInput(ctx context.Context, loc core.Location, r chunk.Range, addr string, pins *[]func()) (*tensor.Array, error) {
	if !w.cfg.NoMap {
		if m, ok := wire.MapLocal(ctx, &w.remote, loc, addr, w.cfg.SecretKey); ok {
			*pins = append(*pins, func() { m.Close() })
			w.mapped.Add(int64(len(m.Data)))
			return chunk.View(m.Array(), r)
		}
	}
	if !r.Whole() {
		return w.pool.FetchRange(ctx, addr, loc.ID, r)
	}
	return w.pool.Fetch(ctx, addr, loc.ID)
}
