package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"marsfs/tensor"
	"marsfs/tensor/codec"
	"marsfs/tensor/codec/zarr"
	"marsfs/tensor/spec/syntax"
)

// Data on disk: from_npy names a .npy file in the server's data directory
// (Parse's data), whose header is read when the spec is parsed; the workers
// read the chunks' bytes from the file themselves (see tile and kernel).

func registerFiles() {
	register("to_npy", []string{"x", "path", "overwrite"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if !c.has(1) {
			return nil, c.missing(1)
		}
		path, err := c.str(1)
		if err != nil {
			return nil, err
		}
		overwrite, err := c.bool(2, false)
		if err != nil {
			return nil, err
		}
		sink := Sink{Format: "npy", Path: path, Overwrite: overwrite, Node: x}
		if err := checkSink(c.b.data, sink); err != nil {
			return nil, c.errorf(1, "to_npy: %w", err)
		}
		if tensor.HasUnknown(x.Shape) {
			return nil, c.errorf(0, "to_npy: the shape of what it writes is known only once the data are (%s)", ShapeString(x.Shape))
		}
		return sinkValue{sink}, nil
	})
	register("to_zarr", []string{"x", "path", "compressor", "zarr_format", "overwrite"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if !c.has(1) {
			return nil, c.missing(1)
		}
		path, err := c.str(1)
		if err != nil {
			return nil, err
		}
		comp := "zstd"
		if c.args[2].set {
			if comp, err = c.str(2); err != nil { // None: ""
				return nil, err
			}
		}
		format, err := c.int(3, 2)
		if err != nil {
			return nil, err
		}
		overwrite, err := c.bool(4, false)
		if err != nil {
			return nil, err
		}
		sink := Sink{Format: "zarr", Path: path, Overwrite: overwrite, Node: x, Compressor: comp, ZarrFormat: format}
		if err := checkZarrSink(sink); err != nil {
			return nil, c.errorf(2, "to_zarr: %w", err)
		}
		if err := checkSink(c.b.data, sink); err != nil {
			return nil, c.errorf(1, "to_zarr: %w", err)
		}
		if tensor.HasUnknown(x.Shape) {
			return nil, c.errorf(0, "to_zarr: the shape of what it writes is known only once the data are (%s)", ShapeString(x.Shape))
		}
		return sinkValue{sink}, nil
	})
	register("from_zarr", []string{"path", "chunks"}, func(c *call) (value, error) {
		if !c.has(0) {
			return nil, c.missing(0)
		}
		path, err := c.str(0)
		if err != nil {
			return nil, err
		}
		n, err := zarrNode(c.b.data, path)
		if err != nil {
			return nil, c.errorf(0, "from_zarr: %w", err)
		}
		if c.has(1) {
			n.Chunks, err = c.chunks(1, n.Shape)
		} else {
			n.Chunks = storeChunks(n.Attrs.Zarr)
			err = checkCount(n.Chunks, n.Shape, c.pos, c.b.maxChunks)
		}
		if err != nil {
			return nil, err
		}
		return c.b.addAt(c.pos, n)
	})
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
			return nil, c.errorf(0, "from_npy: %w", err)
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

// checkZarrSink checks a to_zarr sink's options.
func checkZarrSink(s Sink) error {
	switch s.Compressor {
	case "zstd", "blosc", "zlib", "":
	default:
		return fmt.Errorf("compressor %q: give \"zstd\", \"blosc\", \"zlib\" or None", s.Compressor)
	}
	if s.ZarrFormat != 2 && s.ZarrFormat != 3 {
		return fmt.Errorf("zarr_format=%d: give 2 or 3", s.ZarrFormat)
	}
	return nil
}

// zarrNode reads the metadata of the Zarr array at path (its directory)
// in data and returns the node that reads it, without its chunks.
func zarrNode(data fs.FS, path string) (*Node, error) {
	if data == nil {
		return nil, errors.New("this server has no data directory (--data-dir), so a spec cannot name a file")
	}
	if err := CheckDataPath(path); err != nil {
		return nil, err
	}
	a, err := zarr.Open(data, path)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", path, unwrapPath(err))
	}
	return &Node{Op: tensor.OpFromZarr, Shape: cloneInts(a.Shape), DType: a.DType,
		Attrs: Attrs{Path: path, Zarr: a}}, nil
}

// storeChunks chunks an array as its store does: the store's chunk
// shape, the last chunk of each axis cut at the array's edge.
func storeChunks(a *zarr.Array) [][]int {
	out := make([][]int, len(a.Shape))
	for ax, l := range a.Shape {
		c := a.Chunks[ax]
		out[ax] = []int{}
		for s := 0; s < l; s += c {
			out[ax] = append(out[ax], min(c, l-s))
		}
		if l == 0 {
			out[ax] = []int{0}
		}
	}
	return out
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

// sinkValue is what a statement function (to_npy) evaluates to: a file
// the graph writes. It is a statement of its own, never a value to assign.
type sinkValue struct{ sink Sink }

// statement evaluates an expression statement, which must be a statement
// function's call.
func (b *builder) statement(s syntax.Stmt) error {
	v, err := b.eval(s.Value)
	if err != nil {
		return err
	}
	sv, ok := v.(sinkValue)
	if !ok {
		return syntax.Errorf(s.Pos, "expression is not assigned to a name (write name = expression)")
	}
	for _, o := range b.sinks {
		if o.Path == sv.sink.Path {
			return syntax.Errorf(s.Pos, "%q is written twice", o.Path)
		}
	}
	b.sinks = append(b.sinks, sv.sink)
	return nil
}

// checkSink checks that a graph may write sink: a data directory, a path
// in it whose directory exists, and no file there unless Overwrite.
func checkSink(data fs.FS, sink Sink) error {
	if data == nil {
		return errors.New("this server has no data directory (--data-dir), so a spec cannot name a file")
	}
	if err := CheckDataPath(sink.Path); err != nil {
		return err
	}
	if dir := pathDir(sink.Path); dir != "." {
		st, err := fs.Stat(data, dir)
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("%q: %w", sink.Path, unwrapPath(err))
		}
		if err != nil || !st.IsDir() {
			return fmt.Errorf("%q: directory %q does not exist", sink.Path, dir)
		}
	}
	if _, err := fs.Stat(data, sink.Path); err == nil && !sink.Overwrite {
		return fmt.Errorf("%q exists: give overwrite=True to replace it", sink.Path)
	}
	return nil
}

func pathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "."
	}
	return p[:i]
}
