package asuser

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"marsfs/tensor/chunk"
)

// OverflowGID is the group of an owner whose uid the user database lacks
// (the kernel's overflowgid, Debian's nogroup).
const OverflowGID = 65534

// A Root is a data directory that the process acts in for users.
type Root struct {
	root     *os.Root
	process  creds           // restored after each act
	unmapped map[string]bool // identities that are no user of this host
}

// New returns root as a directory to act in for users. unmapped names the
// identities that are no local user whatever the user database says
// (package fs's "key" and "tcp"): they have no owner.
func New(root *os.Root, unmapped ...string) (*Root, error) {
	c, err := processCreds()
	if err != nil {
		return nil, err
	}
	r := &Root{root: root, process: c, unmapped: make(map[string]bool)}
	for _, id := range unmapped {
		r.unmapped[id] = true
	}
	return r, nil
}

// refused is an error that is EACCES (and so fs.ErrPermission).
func refused(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), syscall.EACCES)
}

// Owner returns the local user an identity (a login name, or a uid
// without one) stands for, with its gid and groups from the user
// database; see the package doc.
func (r *Root) Owner(ident string) (chunk.Owner, error) {
	if r.unmapped[ident] || ident == "" {
		return chunk.Owner{}, refused("identity %q is no user of this host, and files are opened only for its users", ident)
	}
	var u *user.User
	var err error
	uid, nerr := strconv.ParseUint(ident, 10, 32)
	if nerr == nil {
		u, err = user.LookupId(ident)
		var unknown user.UnknownUserIdError
		if errors.As(err, &unknown) {
			return chunk.Owner{Known: true, UID: uint32(uid), GID: OverflowGID}, nil
		}
	} else {
		u, err = user.Lookup(ident)
	}
	if err != nil {
		return chunk.Owner{}, refused("identity %q: %v", ident, err)
	}
	o := chunk.Owner{Known: true}
	if o.UID, err = parseID(u.Uid); err != nil {
		return chunk.Owner{}, fmt.Errorf("user %q: uid: %w", ident, err)
	}
	if o.GID, err = parseID(u.Gid); err != nil {
		return chunk.Owner{}, fmt.Errorf("user %q: gid: %w", ident, err)
	}
	gids, err := u.GroupIds()
	if err != nil {
		return chunk.Owner{}, fmt.Errorf("user %q: groups: %w", ident, err)
	}
	for _, g := range gids {
		id, err := parseID(g)
		if err != nil {
			return chunk.Owner{}, fmt.Errorf("user %q: group: %w", ident, err)
		}
		o.Groups = append(o.Groups, id)
	}
	return o, nil
}

func parseID(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err
}

// For returns the directory as o sees it, or EACCES when this process
// may not act for o: o is no user, or the process is not root and o is
// not its own user.
func (r *Root) For(o chunk.Owner) (*Dir, error) {
	if !o.Known {
		return nil, refused("files are opened only for users of this host")
	}
	if r.process.uid != 0 {
		if o.UID != r.process.uid {
			return nil, refused("this server runs as uid %d, not as root, and opens files for that uid only, not for uid %d", r.process.uid, o.UID)
		}
		return &Dir{r: r, o: o}, nil // its own rights are o's
	}
	return &Dir{r: r, o: o, act: true}, nil
}

// Session returns, for the owner of a session named by ident, the data
// directory as that user sees it (for the scheduler's reads at submit)
// and the owner the session's file ops carry to the workers.
func (r *Root) Session(ident string) (fs.FS, chunk.Owner, error) {
	o, err := r.Owner(ident)
	if err != nil {
		return nil, o, err
	}
	d, err := r.For(o)
	if err != nil {
		return nil, o, err
	}
	return d.FS(), o, nil
}

// A Dir is a data directory as one user sees it: os.Root's operations,
// each made with the user's rights.
type Dir struct {
	r   *Root
	o   chunk.Owner
	act bool // take o's credentials (else the process's own are o's)
}

func (d *Dir) do(fn func() error) error {
	if !d.act {
		return fn()
	}
	return asOwner(d.o, d.r.process, fn)
}

// Open opens the file name for reading.
func (d *Dir) Open(name string) (f *os.File, err error) {
	err = d.do(func() error { f, err = d.r.root.Open(name); return err })
	return f, err
}

// OpenFile opens the file name as os.OpenFile does.
func (d *Dir) OpenFile(name string, flag int, perm fs.FileMode) (f *os.File, err error) {
	err = d.do(func() error { f, err = d.r.root.OpenFile(name, flag, perm); return err })
	return f, err
}

// Stat returns the FileInfo of the file name, following links.
func (d *Dir) Stat(name string) (fi fs.FileInfo, err error) {
	err = d.do(func() error { fi, err = d.r.root.Stat(name); return err })
	return fi, err
}

// Lstat returns the FileInfo of the file name.
func (d *Dir) Lstat(name string) (fi fs.FileInfo, err error) {
	err = d.do(func() error { fi, err = d.r.root.Lstat(name); return err })
	return fi, err
}

// Mkdir makes the directory name.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	return d.do(func() error { return d.r.root.Mkdir(name, perm) })
}

// MkdirAll makes the directory name and those on its path.
func (d *Dir) MkdirAll(name string, perm fs.FileMode) error {
	return d.do(func() error { return d.r.root.MkdirAll(name, perm) })
}

// Remove removes the file or empty directory name.
func (d *Dir) Remove(name string) error {
	return d.do(func() error { return d.r.root.Remove(name) })
}

// RemoveAll removes name and all it holds.
func (d *Dir) RemoveAll(name string) error {
	return d.do(func() error { return d.r.root.RemoveAll(name) })
}

// Rename renames oldname to newname.
func (d *Dir) Rename(oldname, newname string) error {
	return d.do(func() error { return d.r.root.Rename(oldname, newname) })
}

// WriteFile writes data to the file name, creating it with perm.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	return d.do(func() error { return d.r.root.WriteFile(name, data, perm) })
}

// FS returns the directory as an fs.FS (and fs.StatFS) of the user's.
func (d *Dir) FS() fs.FS { return dirFS{d} }

type dirFS struct{ d *Dir }

func (f dirFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	file, err := f.d.Open(name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (f dirFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	return f.d.Stat(name)
}
