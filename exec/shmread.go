package exec

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"

	"marsfs/shm"
	"marsfs/tensor"
)

// A process on the worker's host reads a chunk in shared memory by mapping
// the chunk's file read-only rather than fetching it over TCP. It asks the
// worker where the chunk lives over a locate connection: the client sends a
// chunk ID (8 bytes, big-endian); the worker answers with a status byte (and
// error text), then its host's boot ID and the chunk file's path, each as a
// 2-byte length and the bytes (an empty boot ID: the worker has no files to
// map). The reader maps the file only when the boot ID is its own and the
// file names the chunk in its header.

// A pathStore is a Store whose chunks are files a co-located process can
// map (see shm.Arrays.Path).
type pathStore interface {
	Path(id uint64) (string, bool)
}

// mapMin is the smallest chunk read by mapping: below it the locate
// connection and the mapping's system calls cost about as much as a copy
// over loopback.
const mapMin = 1 << 20

// bootID identifies this boot of this host: two processes that read the
// same one share their files. It is empty when unknown.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// serveLocate answers a locate connection's requests until it closes.
func (w *Worker) serveLocate(c net.Conn, br *bufio.Reader) {
	ps, _ := w.store.(pathStore)
	bw := bufio.NewWriter(c)
	var id [8]byte
	for {
		if _, err := io.ReadFull(br, id[:]); err != nil {
			return
		}
		// Without files to map, ever, the worker answers an empty boot ID.
		var boot, path string
		if ps != nil && bootID() != "" {
			boot = bootID()
			var ok bool
			if path, ok = ps.Path(getID(id[:])); !ok {
				boot = ""
			}
		}
		var err error
		if boot == "" && ps != nil && bootID() != "" {
			err = writeErr(bw, fmt.Sprintf("worker %s has no file for chunk %d", w.name, getID(id[:])))
		} else {
			bw.WriteByte(0)
			writeString(bw, boot)
			err = writeString(bw, path)
		}
		if err != nil || bw.Flush() != nil {
			return
		}
	}
}

func writeString(w *bufio.Writer, s string) error {
	var n [2]byte
	binary.LittleEndian.PutUint16(n[:], uint16(len(s)))
	w.Write(n[:])
	_, err := w.WriteString(s)
	return err
}

func readString(r *bufio.Reader) (string, error) {
	var n [2]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", err
	}
	b := make([]byte, binary.LittleEndian.Uint16(n[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// errRemote is returned by mapChunk for a worker on another host.
var errRemote = errors.New("worker on another host")

// mapChunk maps chunk id, held by the worker serving at addr, read-only
// from the worker's shared memory: its data are the store's pages.
func mapChunk(ctx context.Context, addr string, id uint64, key []byte) (*shm.Mapping, error) {
	if bootID() == "" {
		return nil, errRemote
	}
	c, err := dialData(ctx, addr, connLocate, key)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	c.Write(putID(id))
	br := bufio.NewReader(c)
	if err := readStatus(br); err != nil {
		return nil, err
	}
	boot, err := readString(br)
	if err != nil {
		return nil, err
	}
	path, err := readString(br)
	if err != nil {
		return nil, err
	}
	if boot != bootID() {
		return nil, errRemote
	}
	m, err := shm.MapChunk(path)
	if err != nil {
		return nil, err // moved (spilled, deleted) meanwhile
	}
	if m.ID != id {
		m.Close()
		return nil, fmt.Errorf("%s holds chunk %d, not %d", path, m.ID, id)
	}
	return m, nil
}

// mapLocal maps chunk loc.ID when its worker, serving at addr, shares this
// host and keeps it in shared memory, reporting false when it cannot (the
// caller then fetches it). remote holds the names of workers found on other
// hosts, which are not asked again.
func mapLocal(ctx context.Context, remote *sync.Map, loc Location, addr string, key []byte) (*shm.Mapping, bool) {
	if loc.NBytes < mapMin {
		return nil, false
	}
	if _, ok := remote.Load(loc.Worker); ok {
		return nil, false
	}
	m, err := mapChunk(ctx, addr, loc.ID, key)
	if errors.Is(err, errRemote) {
		remote.Store(loc.Worker, true)
	}
	return m, err == nil
}

// fetchLocal reads chunk loc.ID by mapping it (see mapLocal). The array's
// data stay mapped until the array is unreachable: a caller keeps the
// array, not only its Data, while it reads them.
func (s *Scheduler) fetchLocal(ctx context.Context, loc Location, addr string) (*tensor.Array, bool) {
	if s.cfg.NoMap {
		return nil, false
	}
	m, ok := mapLocal(ctx, &s.remote, loc, addr, s.cfg.SecretKey)
	if !ok {
		return nil, false
	}
	a := m.Array()
	runtime.AddCleanup(a, func(m *shm.Mapping) { m.Close() }, m)
	return a, true
}

// fetchInput reads input chunk loc.ID of a task from the worker serving at
// addr: by mapping it when that worker shares this host, adding to *pins
// what unmaps it, else over TCP.
func (w *Worker) fetchInput(ctx context.Context, loc Location, addr string, pins *[]func()) (*tensor.Array, error) {
	if !w.cfg.NoMap {
		if m, ok := mapLocal(ctx, &w.remote, loc, addr, w.cfg.SecretKey); ok {
			*pins = append(*pins, func() { m.Close() })
			w.mapped.Add(int64(len(m.Data)))
			return m.Array(), nil
		}
	}
	return w.pool.fetch(ctx, addr, loc.ID)
}
