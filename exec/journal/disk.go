package journal

import (
	"io"
	"os"
)

// The journal's writes go through a fileSystem, the one edge where its
// I/O happens: the tests give a Dir one whose disk fills or fails at a
// chosen byte (disk_test.go), while the records, their framing and their
// fold stay pure. Reading back (Load) is plain os: it needs no faults to
// be tested, any file's bytes will do.
type fileSystem interface {
	OpenFile(name string, flag int, perm os.FileMode) (file, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	// SyncDir makes the names in directory path durable: a file created,
	// renamed or removed there.
	SyncDir(path string) error
}

// A file is a journal file open to write, as the Log uses it.
type file interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Close() error
}

// osFS is the disk.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	return os.OpenFile(name, flag, perm)
}

func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) SyncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
