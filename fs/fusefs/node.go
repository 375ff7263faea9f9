package fusefs

import (
	"context"
	"errors"
	"io"
	"path"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/fs"
)

// A node is one file or directory of the mount, named by its path in the
// tree. It keeps no fid: every operation walks its path afresh, so that a
// path always reaches what it names now (graphs/last is the newest graph,
// tensors/x the tensor x last assigned).
type node struct {
	gofs.Inode
	m    *Mount
	path string
}

var (
	_ gofs.NodeLookuper  = (*node)(nil)
	_ gofs.NodeGetattrer = (*node)(nil)
	_ gofs.NodeSetattrer = (*node)(nil)
	_ gofs.NodeReaddirer = (*node)(nil)
	_ gofs.NodeOpener    = (*node)(nil)
	_ gofs.NodeCreater   = (*node)(nil)
)

// errno is the errno of a 9P error; EIO for one that carries none (a lost
// connection).
func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e linux.Errno
	if errors.As(err, &e) {
		return syscall.Errno(e)
	}
	if errors.Is(err, io.EOF) {
		return 0
	}
	return syscall.EIO
}

// walk returns a fid for the node's path, or for a name in its directory.
func (n *node) walk(name string) (p9.File, string, error) {
	p := n.path
	if name != "" {
		p = path.Join(p, name)
	}
	f, err := n.m.c.Walk(p)
	return f, p, err
}

// fileMode is the file type of a QID in mode bits.
func fileMode(q p9.QID) uint32 {
	if q.Type&p9.TypeDir != 0 {
		return syscall.S_IFDIR
	}
	return syscall.S_IFREG
}

// setAttr fills out from a 9P stat.
func setAttr(out *fuse.Attr, q p9.QID, a p9.Attr) {
	out.Ino = q.Path
	out.Mode = fileMode(q) | uint32(a.Mode.Permissions())
	out.Size = a.Size
	out.Blocks = a.Blocks
	out.Blksize = uint32(a.BlockSize)
	out.Nlink = uint32(a.NLink)
	out.Uid, out.Gid = uint32(a.UID), uint32(a.GID)
	out.Atime, out.Atimensec = a.ATimeSeconds, uint32(a.ATimeNanoSeconds)
	out.Mtime, out.Mtimensec = a.MTimeSeconds, uint32(a.MTimeNanoSeconds)
	out.Ctime, out.Ctimensec = a.CTimeSeconds, uint32(a.CTimeNanoSeconds)
}

// Lookup implements gofs.NodeLookuper: a walk and a stat.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	f, p, err := n.walk(name)
	if err != nil {
		return nil, errno(err)
	}
	q, _, a, err := f.GetAttr(p9.AttrMaskAll)
	f.Close()
	if err != nil {
		return nil, errno(err)
	}
	setAttr(&out.Attr, q, a)
	child := &node{m: n.m, path: p}
	return n.NewInode(ctx, child, gofs.StableAttr{Mode: fileMode(q), Ino: q.Path}), 0
}

// Getattr implements gofs.NodeGetattrer. An open file is stat'ed through
// its fid, as a created upload has no path to walk.
func (n *node) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*handle); ok {
		if f := h.fid(); f != nil {
			q, _, a, err := f.GetAttr(p9.AttrMaskAll)
			if err != nil {
				return errno(err)
			}
			setAttr(&out.Attr, q, a)
			return 0
		}
	}
	f, _, err := n.walk("")
	if err != nil {
		return errno(err)
	}
	defer f.Close()
	q, _, a, err := f.GetAttr(p9.AttrMaskAll)
	if err != nil {
		return errno(err)
	}
	setAttr(&out.Attr, q, a)
	return 0
}

// Setattr implements gofs.NodeSetattrer. The server accepts truncation to
// zero of writable files, which shells ask for before writing to submit.
func (n *node) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	var valid p9.SetAttrMask
	var attr p9.SetAttr
	if sz, ok := in.GetSize(); ok {
		valid.Size, attr.Size = true, sz
	}
	if m, ok := in.GetMode(); ok {
		valid.Permissions, attr.Permissions = true, p9.FileMode(m&07777)
	}
	if t, ok := in.GetATime(); ok {
		valid.ATime, valid.ATimeNotSystemTime = true, true
		attr.ATimeSeconds, attr.ATimeNanoSeconds = uint64(t.Unix()), uint64(t.Nanosecond())
	}
	if t, ok := in.GetMTime(); ok {
		valid.MTime, valid.MTimeNotSystemTime = true, true
		attr.MTimeSeconds, attr.MTimeNanoSeconds = uint64(t.Unix()), uint64(t.Nanosecond())
	}
	var f p9.File
	if h, ok := fh.(*handle); ok {
		f = h.fid()
	}
	if f == nil {
		w, _, err := n.walk("")
		if err != nil {
			return errno(err)
		}
		defer w.Close()
		f = w
	}
	if err := f.SetAttr(valid, attr); err != nil {
		return errno(err)
	}
	q, _, a, err := f.GetAttr(p9.AttrMaskAll)
	if err != nil {
		return errno(err)
	}
	setAttr(&out.Attr, q, a)
	return 0
}

// Readdir implements gofs.NodeReaddirer: the listing of one open of the
// directory.
func (n *node) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	f, _, err := n.walk("")
	if err != nil {
		return nil, errno(err)
	}
	defer f.Close()
	if _, _, err := f.Open(p9.ReadOnly); err != nil {
		return nil, errno(err)
	}
	var list []fuse.DirEntry
	var off uint64
	for {
		ents, err := f.Readdir(off, 64<<10)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, errno(err)
		}
		if len(ents) == 0 {
			return gofs.NewListDirStream(list), 0
		}
		for _, e := range ents {
			list = append(list, fuse.DirEntry{Name: e.Name, Ino: e.QID.Path, Mode: fileMode(e.QID)})
		}
		off = ents[len(ents)-1].Offset
	}
}

// openFlags is the 9P open mode of open(2) flags.
func openFlags(flags uint32) p9.OpenFlags {
	switch flags & syscall.O_ACCMODE {
	case syscall.O_WRONLY:
		return p9.WriteOnly
	case syscall.O_RDWR:
		return p9.ReadWrite
	}
	return p9.ReadOnly
}

// Open implements gofs.NodeOpener: a walk and an open, kept by the handle.
func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	h := &handle{m: n.m, path: n.path, mode: openFlags(flags)}
	if blocks(n.path) {
		c, err := fs.DialKey(n.m.addr, n.m.key)
		if err != nil {
			return nil, 0, errno(err)
		}
		h.own = c
	}
	f, err := h.open()
	if err != nil {
		if h.own != nil {
			h.own.Close()
		}
		return nil, 0, errno(err)
	}
	h.f = f
	return h, fuse.FOPEN_DIRECT_IO, 0
}

// Create implements gofs.NodeCreater: uploads are files created in a
// session's tensors directory.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	d, p, err := n.walk("")
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	p = path.Join(p, name)
	// On the client the created file takes over the directory's fid.
	f, q, _, err := d.Create(name, openFlags(flags), p9.FileMode(mode&07777), p9.NoUID, p9.NoGID)
	if err != nil {
		d.Close()
		return nil, nil, 0, errno(err)
	}
	if _, _, a, err := f.GetAttr(p9.AttrMaskAll); err == nil {
		setAttr(&out.Attr, q, a)
	} else {
		out.Attr.Ino, out.Attr.Mode = q.Path, syscall.S_IFREG|mode&07777
	}
	h := &handle{m: n.m, path: p, mode: openFlags(flags), created: true, f: f}
	child := n.NewInode(ctx, &node{m: n.m, path: p}, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: q.Path})
	return child, h, fuse.FOPEN_DIRECT_IO, 0
}

var (
	_ gofs.NodeUnlinker = (*node)(nil)
	_ gofs.NodeRmdirer  = (*node)(nil)
	_ gofs.NodeRenamer  = (*node)(nil)
)

// unlinkAt asks the server to remove an entry of the directory; marsfs
// refuses, but the answer is the server's.
func (n *node) unlinkAt(name string, flags uint32) syscall.Errno {
	d, _, err := n.walk("")
	if err != nil {
		return errno(err)
	}
	defer d.Close()
	return errno(d.UnlinkAt(name, flags))
}

// Unlink implements gofs.NodeUnlinker.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.unlinkAt(name, 0)
}

// Rmdir implements gofs.NodeRmdirer.
func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.unlinkAt(name, 0x200) // AT_REMOVEDIR
}

// Rename implements gofs.NodeRenamer.
func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	d, _, err := n.walk("")
	if err != nil {
		return errno(err)
	}
	defer d.Close()
	nd, _, err := np.walk("")
	if err != nil {
		return errno(err)
	}
	defer nd.Close()
	return errno(d.RenameAt(name, nd, newName))
}
