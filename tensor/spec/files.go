package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"marsfs/tensor"
	"marsfs/tensor/codec"
	"marsfs/tensor/codec/zarr"
)

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

// NPYNode reads the header of the .npy file at path in data and returns
// the node that reads it, without its chunks.
func NPYNode(data fs.FS, path string) (*Node, error) {
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
	return &Node{Op: tensor.OpFromNPY, Shape: CloneInts(l.Shape), DType: l.DType,
		Attrs: Attrs{Path: path, FileOffset: cr.n, Fortran: l.Fortran, BigEndian: l.Big}}, nil
}

// CheckZarrSink checks a to_zarr sink's options.
func CheckZarrSink(s Sink) error {
	switch s.Compressor {
	case "zstd", "blosc", "zlib", "":
	default:
		return fmt.Errorf("compressor %q: give \"zstd\", \"blosc\", \"zlib\" or None", s.Compressor)
	}
	if s.ZarrFormat != 2 && s.ZarrFormat != 3 {
		return fmt.Errorf("zarr_format=%d: give 2 or 3", s.ZarrFormat)
	}
	if (s.Dims != nil || s.Attrs != "") && s.ZarrFormat != 2 {
		return errors.New("dims= and attrs= are written as xarray reads them, in zarr_format=2")
	}
	if s.Dims != nil {
		if s.Node != nil && len(s.Dims) != len(s.Node.Shape) {
			return fmt.Errorf("dims=%s names %d dimensions of an array of %d", dimsString(s.Dims), len(s.Dims), len(s.Node.Shape))
		}
		for i, d := range s.Dims {
			if d == "" || slices.Contains(s.Dims[:i], d) {
				return fmt.Errorf("dims=%s: each dimension needs a name of its own", dimsString(s.Dims))
			}
		}
	}
	if s.Attrs != "" {
		if _, err := zarr.AttrsMeta(nil, []byte(s.Attrs)); err != nil {
			return err
		}
		if t := strings.TrimSpace(s.Attrs); !strings.HasPrefix(t, "{") {
			return errors.New("attrs: give a dict")
		}
	}
	return nil
}

func dimsString(dims []string) string {
	q := make([]string, len(dims))
	for i, d := range dims {
		q[i] = strconv.Quote(d)
	}
	if len(q) == 1 {
		return "(" + q[0] + ",)"
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// ZarrNode reads the metadata of the Zarr array at path (its directory)
// in data and returns the node that reads it, without its chunks.
func ZarrNode(data fs.FS, path string) (*Node, error) {
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
	return &Node{Op: tensor.OpFromZarr, Shape: CloneInts(a.Shape), DType: a.DType,
		Attrs: Attrs{Path: path, Zarr: a}}, nil
}

// StoreChunks chunks an array as its store does: the store's chunk
// shape, the last chunk of each axis cut at the array's edge.
func StoreChunks(a *zarr.Array) [][]int {
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

// CheckSink checks that a graph may write sink: a data directory, a path
// in it whose directory exists, and no file there unless Overwrite.
func CheckSink(data fs.FS, sink Sink) error {
	if data == nil {
		return errors.New("this server has no data directory (--data-dir), so a spec cannot name a file")
	}
	if err := CheckDataPath(sink.Path); err != nil {
		return err
	}
	dir := pathDir(sink.Path)
	if root, ok := zarr.GroupRoot(sink.Path); ok && sink.Format == "zarr" && sink.ZarrFormat == 2 {
		// The groups on the path are made by the write: the directory
		// the outermost one is in must exist.
		dir = pathDir(root)
	}
	if dir != "." {
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
