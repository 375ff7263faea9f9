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
// 2-byte length and the bytes. The reader maps the file only when the boot
// ID is its own and the file names the chunk in its header.

// A pathStore is a Store whose chunks are files a co-located process can
// map (see shm.Arrays.Path).
type pathStore interface {
	Path(id uint64) (string, bool)
}

// mapMin is the smallest chunk read by mapping: below it the system calls
// of a mapping cost more than a copy over loopback.
const mapMin = 256 << 10

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
		var path string
		ok := ps != nil && bootID() != ""
		if ok {
			path, ok = ps.Path(getID(id[:]))
		}
		var err error
		if !ok {
			err = writeErr(bw, fmt.Sprintf("worker %s has no file for chunk %d", w.name, getID(id[:])))
		} else {
			bw.WriteByte(0)
			writeString(bw, bootID())
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
// from the worker's shared memory. The array's data are the store's pages;
// they stay mapped until the array is unreachable, so a caller must keep
// the array, not only its Data, while it reads them.
func mapChunk(ctx context.Context, addr string, id uint64, key []byte) (*tensor.Array, error) {
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
	a := m.Array()
	runtime.AddCleanup(a, func(m *shm.Mapping) { m.Close() }, m)
	return a, nil
}

// fetchLocal reads chunk id of loc by mapping it when its worker shares
// this host, reporting false when it cannot (the caller then fetches it).
// A worker found on another host is not asked again.
func (s *Scheduler) fetchLocal(ctx context.Context, loc Location, addr string) (*tensor.Array, bool) {
	if s.cfg.NoMap || loc.NBytes < mapMin {
		return nil, false
	}
	if _, remote := s.remote.Load(loc.Worker); remote {
		return nil, false
	}
	a, err := mapChunk(ctx, addr, loc.ID, s.cfg.SecretKey)
	if errors.Is(err, errRemote) {
		s.remote.Store(loc.Worker, true)
	}
	return a, err == nil
}
