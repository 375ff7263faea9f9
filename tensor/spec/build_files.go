package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// Data on disk: from_npy names a .npy file in the server's data directory
// (Parse's data), whose header is read when the spec is parsed; the workers
// read the chunks' bytes from the file themselves (see tile and kernel).

func registerFiles() {
	register("from_npy", []string{"path", "chunks"}, func(c *call) (value, error) {
		if !c.has(0) {
			return nil, c.missing(0)
		}
		path, err := c.str(0)
		if err != nil {
			return nil, err
		}
		n, err := npyNode(c.b.data, path)
		if err != nil {
			return nil, c.errorf(0, "from_npy: %v", err)
		}
		if n.Chunks, err = c.chunks(1, n.Shape); err != nil {
			return nil, err
		}
		return c.b.addAt(c.pos, n)
	})
}

// CheckDataPath reports why path cannot name a file in a data directory:
// it must be relative, slash-separated, without "." or ".." elements, and
// so cannot leave the directory by its name (the directory's fs.FS refuses
// symbolic links that leave it).
func CheckDataPath(path string) error {
	if !fs.ValidPath(path) || path == "." {
		return fmt.Errorf("path %q is not inside the data directory: give it relative to the directory, without .. or a leading /", path)
	}
	return nil
}

// npyNode reads the header of the .npy file at path in data and returns
// the node that reads it, without its chunks.
func npyNode(data fs.FS, path string) (*Node, error) {
	if data == nil {
		return nil, errors.New("this server has no data directory (--data-dir), so a spec cannot name a file")
	}
	if err := CheckDataPath(path); err != nil {
		return nil, err
	}
	f, err := data.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", path, unwrapPath(err))
	}
	defer f.Close()
	cr := &countingReader{r: f}
	l, err := codec.ReadNPYHeader(cr)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", path, err)
	}
	// The file must hold the data the header promises.
	if st, err := f.Stat(); err == nil && st.Size() < cr.n+l.DataSize() {
		return nil, fmt.Errorf("%q: the header says %d bytes of data, the file has %d", path, l.DataSize(), st.Size()-cr.n)
	}
	return &Node{Op: tensor.OpFromNPY, Shape: cloneInts(l.Shape), DType: l.DType,
		Attrs: Attrs{Path: path, FileOffset: cr.n, Fortran: l.Fortran, BigEndian: l.Big}}, nil
}

// unwrapPath drops the path an fs error repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
