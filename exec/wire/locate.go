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

// mapChunk maps chunk id, held by the worker serving at addr, read-only
// from the worker's shared memory: its data are the store's pages.
func mapChunk(ctx context.Context, addr string, id uint64, key []byte) (*shm.Mapping, error) {
	if BootID() == "" {
		return nil, errRemote
	}
	c, err := Dial(ctx, addr, ConnLocate, key)
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
