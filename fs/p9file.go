package fs

import (
	"log"
	"os"
	"os/user"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/hugelgupf/p9/fsimpl/templatefs"
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// attacher gives one connection the root of the tree.
type attacher struct {
	s *Server
	c *conn
}

func (a attacher) Attach() (p9.File, error) {
	return a.c.newFile(a.s, a.s.root())
}

// newFile makes a fid's file for node n, counted against MaxFids until
// its clunk.
func (c *conn) newFile(s *Server, n *node) (*file, error) {
	if c.fids.Add(1) > fidLimit {
		c.fids.Add(-1)
		return nil, linux.EMFILE
	}
	return &file{s: s, c: c, n: n}, nil
}

// A file is a fid's view of a node: the p9.File the server calls.
type file struct {
	p9.DefaultWalkGetAttr
	templatefs.XattrUnimplemented
	templatefs.NoopRenamed
	templatefs.NotLockable
	templatefs.NotSymlinkFile

	s *Server
	c *conn
	n *node

	mu     sync.Mutex
	h      handle  // set by Open or Create
	ents   []*node // a directory's entries, listed at Open
	closed bool
}

var _ p9.File = (*file)(nil)

// guard turns a panic in the tree into EIO for the one request that hit
// it, and logs it: a bug reached by one client's input must not take the
// server, or anyone else's session, down with it.
func (f *file) guard(op string, err *error) {
	if r := recover(); r != nil {
		log.Printf("marsfs: panic in %s %s: %v\n%s", op, f.n.path, r, debug.Stack())
		*err = linux.EIO
	}
}

// Walk implements p9.File.
func (f *file) Walk(names []string) (qids []p9.QID, nf p9.File, err error) {
	defer f.guard("walk", &err)
	n := f.n
	for i, name := range names {
		if n, err = n.walk(f.c, name); err != nil {
			return nil, nil, err
		}
		qids = append(qids, n.qid())
		if n.home != "" {
			// A session of another scheduler: the rest of the walk,
			// and every request on the fid, go to its home.
			rq, rf, err := f.s.walkRemote(f.c, n, names[i+1:])
			if err != nil {
				return nil, nil, err
			}
			return append(qids, rq...), rf, nil
		}
	}
	nf, err = f.c.newFile(f.s, n)
	if err != nil {
		return nil, nil, err
	}
	return qids, nf, nil
}

// StatFS implements p9.File.
func (f *file) StatFS() (p9.FSStat, error) {
	return p9.FSStat{Type: 0x01021997 /* V9FS_MAGIC */, BlockSize: 4096, NameLength: 255}, nil
}

// GetAttr implements p9.File.
func (f *file) GetAttr(req p9.AttrMask) (q p9.QID, m p9.AttrMask, a p9.Attr, err error) {
	defer f.guard("getattr", &err)
	n := f.n
	a.Mode = n.perm
	a.NLink = 1
	if n.dir {
		a.Mode |= p9.ModeDirectory
		a.NLink = 2
	} else {
		a.Mode |= p9.ModeRegular
	}
	uid := f.s.uid(n.owner)
	a.UID, a.GID = p9.UID(uid), p9.GID(uid)
	if n.size != nil {
		a.Size = n.size()
	}
	a.BlockSize = 4096
	a.Blocks = (a.Size + 511) / 512
	// Synthetic content changes at any time: show it as made now.
	now := time.Now()
	sec, nsec := uint64(now.Unix()), uint64(now.Nanosecond())
	a.ATimeSeconds, a.ATimeNanoSeconds = sec, nsec
	a.MTimeSeconds, a.MTimeNanoSeconds = sec, nsec
	a.CTimeSeconds, a.CTimeNanoSeconds = sec, nsec
	m = p9.AttrMask{Mode: true, NLink: true, UID: true, GID: true, Size: true,
		ATime: true, MTime: true, CTime: true, Blocks: true}
	return n.qid(), m, a, nil
}

// SetAttr implements p9.File. On a writable file, truncation to zero and
// changes of times and mode are accepted, as no-ops: shells open with
// O_TRUNC before writing to submit or ctl, and cp -p and shutil.copy2 set
// an upload's times and mode.
func (f *file) SetAttr(valid p9.SetAttrMask, attr p9.SetAttr) error {
	times := p9.SetAttrMask{Size: true, ATime: true, MTime: true, CTime: true, ATimeNotSystemTime: true, MTimeNotSystemTime: true, Permissions: true}
	if f.n.dir || f.n.perm&0222 == 0 || !valid.IsSubsetOf(times) || valid.Size && attr.Size != 0 {
		return linux.EPERM
	}
	return nil
}

// Open implements p9.File.
func (f *file) Open(mode p9.OpenFlags) (q p9.QID, iounit uint32, err error) {
	defer f.guard("open", &err)
	n := f.n
	if n.dir {
		ents, err := n.list(f.c)
		if err != nil {
			return p9.QID{}, 0, err
		}
		f.mu.Lock()
		f.ents = ents
		f.mu.Unlock()
		return n.qid(), 0, nil
	}
	if n.open == nil {
		return p9.QID{}, 0, linux.EACCES
	}
	h, err := n.open(f.c, mode)
	if err != nil {
		return p9.QID{}, 0, err
	}
	f.mu.Lock()
	f.h = h
	f.mu.Unlock()
	return n.qid(), 0, nil
}

func (f *file) handle() (handle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.h == nil {
		return nil, linux.EBADF
	}
	return f.h, nil
}

// ReadAt implements p9.File.
func (f *file) ReadAt(p []byte, off int64) (n int, err error) {
	defer f.guard("read", &err)
	if f.n.dir {
		return 0, linux.EISDIR
	}
	h, err := f.handle()
	if err != nil {
		return 0, err
	}
	return h.ReadAt(p, off)
}

// WriteAt implements p9.File.
func (f *file) WriteAt(p []byte, off int64) (n int, err error) {
	defer f.guard("write", &err)
	h, err := f.handle()
	if err != nil {
		return 0, err
	}
	return h.WriteAt(p, off)
}

// FSync implements p9.File.
func (f *file) FSync() error { return nil }

// Close implements p9.File: the clunk of the fid (and of every other
// reference to it), when submissions and uploads happen.
func (f *file) Close() (err error) {
	defer f.guard("clunk", &err)
	f.mu.Lock()
	h := f.h
	already := f.closed
	f.closed = true
	f.mu.Unlock()
	if already {
		return nil
	}
	f.c.fids.Add(-1)
	if h == nil {
		return nil
	}
	return h.Close()
}

// Readdir implements p9.File from the listing made at Open; offsets are
// entry indexes.
func (f *file) Readdir(offset uint64, count uint32) (p9.Dirents, error) {
	f.mu.Lock()
	ents := f.ents
	f.mu.Unlock()
	if ents == nil && !f.n.dir {
		return nil, linux.ENOTDIR
	}
	var out p9.Dirents
	for i := offset; i < uint64(len(ents)); i++ {
		q := ents[i].qid()
		out = append(out, p9.Dirent{QID: q, Type: q.Type, Offset: i + 1, Name: ents[i].name})
	}
	return out, nil
}

// Create implements p9.File: uploads are made by creating files.
func (f *file) Create(name string, flags p9.OpenFlags, perm p9.FileMode, _ p9.UID, _ p9.GID) (nf p9.File, q p9.QID, iounit uint32, err error) {
	defer f.guard("create", &err)
	if !f.n.dir {
		return nil, p9.QID{}, 0, linux.ENOTDIR
	}
	if f.n.create == nil {
		return nil, p9.QID{}, 0, linux.EPERM
	}
	// The fid's file is replaced by the created one, which counts as
	// another: the directory's stays referenced until the new one's clunk.
	if f.c.fids.Load() >= fidLimit {
		return nil, p9.QID{}, 0, linux.EMFILE
	}
	n, h, err := f.n.create(f.c, name)
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	nf2, err := f.c.newFile(f.s, n)
	if err != nil {
		h.Close()
		return nil, p9.QID{}, 0, err
	}
	nf2.h = h
	return nf2, n.qid(), 0, nil
}

// Mkdir implements p9.File.
func (f *file) Mkdir(string, p9.FileMode, p9.UID, p9.GID) (p9.QID, error) {
	return p9.QID{}, linux.EPERM
}

// Symlink implements p9.File.
func (f *file) Symlink(string, string, p9.UID, p9.GID) (p9.QID, error) {
	return p9.QID{}, linux.EPERM
}

// Link implements p9.File.
func (f *file) Link(p9.File, string) error { return linux.EPERM }

// Mknod implements p9.File.
func (f *file) Mknod(string, p9.FileMode, uint32, uint32, p9.UID, p9.GID) (p9.QID, error) {
	return p9.QID{}, linux.EPERM
}

// Rename implements p9.File.
func (f *file) Rename(p9.File, string) error { return linux.EPERM }

// RenameAt implements p9.File.
func (f *file) RenameAt(string, p9.File, string) error { return linux.EPERM }

// UnlinkAt implements p9.File: only directories that say how remove
// entries (a session's tensors).
func (f *file) UnlinkAt(name string, flags uint32) (err error) {
	defer f.guard("unlinkat", &err)
	if !f.n.dir || f.n.unlink == nil {
		return linux.EPERM
	}
	const removeDir = 0x200 // AT_REMOVEDIR
	return f.n.unlink(f.c, name, flags&removeDir != 0)
}

// uids caches the uids of identities, for stat.
var uids sync.Map

// uid returns the numeric uid files owned by ident show: the user's uid
// when ident names one, else the server's.
func (s *Server) uid(ident string) uint32 {
	if ident == "" {
		return uint32(os.Getuid())
	}
	if v, ok := uids.Load(ident); ok {
		return v.(uint32)
	}
	id := uint32(os.Getuid())
	if n, err := strconv.ParseUint(ident, 10, 32); err == nil {
		id = uint32(n)
	} else if u, err := user.Lookup(ident); err == nil {
		if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			id = uint32(n)
		}
	}
	uids.Store(ident, id)
	return id
}
