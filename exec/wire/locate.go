package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"marsfs/exec/core"
	"marsfs/shm"
)

// MapMin is the smallest chunk read by mapping: below it the locate
// connection and the mapping's system calls cost about as much as a copy
// over loopback.
const MapMin = 1 << 20

// BootID identifies this boot of this host: two processes that read the
// same one share their files. It is empty when unknown.
var BootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

func WriteString(w *bufio.Writer, s string) error {
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

// locateConns holds this process's idle locate connections, by cluster
// key: a worker mapping many chunks of another (a rechunk's row strip
// reads a run of every column strip) asks them all on one connection, as
// the worker's serveLocate answers requests until the connection closes,
// rather than dialing, and being checked for its user, once a chunk.
var locateConns sync.Map // string(key) -> *idleConns

// maxIdleLocate bounds the idle locate connections of a process to all
// the workers of a key.
const maxIdleLocate = 64

func locatePool(key []byte) *idleConns {
	if ic, ok := locateConns.Load(string(key)); ok {
		return ic.(*idleConns)
	}
	ic, _ := locateConns.LoadOrStore(string(key), newIdleConns(ConnLocate, key, maxIdleLocate))
	return ic.(*idleConns)
}

// LocateIdle is the number of idle locate connections this process keeps
// to addr, with key.
func LocateIdle(addr string, key []byte) int { return locatePool(key).idleTo(addr) }

// locate asks c where chunk id's file is: the boot ID of the worker's
// host and the path.
func locate(ctx context.Context, c *dataConn, id uint64) (boot, path string, err error) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if _, err := c.Write(putID(id)); err != nil {
		return "", "", err
	}
	if err := readStatus(c.br); err != nil {
		return "", "", err
	}
	if boot, err = readString(c.br); err != nil {
		return "", "", err
	}
	if path, err = readString(c.br); err != nil {
		return "", "", err
	}
	if !stop() {
		return "", "", ctx.Err() // closed by the context meanwhile
	}
	return boot, path, nil
}

// mapChunk maps chunk id, held by the worker serving at addr, read-only
// from the worker's shared memory: its data are the store's pages.
func mapChunk(ctx context.Context, addr string, id uint64, key []byte) (*shm.Mapping, error) {
	if BootID() == "" {
		return nil, errRemote
	}
	pool := locatePool(key)
	var boot, path string
	for {
		c, reused, err := pool.get(ctx, addr)
		if err != nil {
			return nil, err
		}
		boot, path, err = locate(ctx, c, id)
		if err == nil {
			pool.put(addr, c)
			break
		}
		c.Close()
		var re remoteError
		if !reused || ctx.Err() != nil || errors.As(err, &re) {
			return nil, err
		}
		// An idle connection the worker closed (it restarted, or
		// closed its connections): ask again on another.
	}
	if boot != BootID() {
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

// MapLocal maps chunk loc.ID when its worker, serving at addr, shares this
// host and keeps it in shared memory, reporting false when it cannot (the
// caller then fetches it). remote holds the names of workers found on other
// hosts, which are not asked again.
func MapLocal(ctx context.Context, remote *sync.Map, loc core.Location, addr string, key []byte) (*shm.Mapping, bool) {
	if loc.NBytes < MapMin {
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
