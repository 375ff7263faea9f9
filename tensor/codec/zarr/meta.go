package zarr

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"marsfs/tensor"
)

// An Array is what a Zarr array's metadata says of it, as far as reading
// and writing its chunks needs.
type Array struct {
	Format int   // 2 or 3
	Shape  []int // the array's
	Chunks []int // the store's chunk shape
	DType  tensor.DType
	// BigEndian: the stored elements' byte order.
	BigEndian bool
	// Perm is the transpose of a chunk before its bytes are laid out in C
	// order: stored axis k is the chunk's axis Perm[k]. nil is C order;
	// format 2's order "F" is the axes reversed.
	Perm []int
	// Fill is the element of the chunks the store lacks, in the dtype's
	// native (little-endian) bytes.
	Fill []byte
	// A chunk's key is Prefix, then its indices joined by Separator
	// ("c/1/2" with format 3's default encoding, "1.2" with format 2's).
	Prefix    string
	Separator string
	Codecs    []Codec // after the elements are laid out, in encoding order
	// Shard, when not nil, says that each store chunk is a shard of
	// inner chunks (format 3's sharding_indexed), laid out by Shard in
	// place of Perm and BigEndian.
	Shard *Shard
}

// A Shard is how a store chunk holds inner chunks: Inner is the array of
// one shard (its Shape the shard's, its Chunks the inner chunks'), and an
// index of (offset, length) pairs, uint64 little-endian, one an inner
// chunk in C order, at the shard's end or start, with a crc32c of it when
// IndexCRC. A pair of two all-ones values is an inner chunk left out:
// the fill value.
type Shard struct {
	Inner        Array
	IndexAtStart bool
	IndexCRC     bool
}

// MetaName is the metadata file of the format: ".zarray" or "zarr.json".
func (a *Array) MetaName() string {
	if a.Format == 3 {
		return "zarr.json"
	}
	return ".zarray"
}

// ChunkBytes is the size of a chunk's elements, decoded.
func (a *Array) ChunkBytes() int { return tensor.NumElements(a.Chunks) * a.DType.Size() }

// Grid is the number of chunks along each axis.
func (a *Array) Grid() []int {
	g := make([]int, len(a.Shape))
	for i, n := range a.Shape {
		if a.Chunks[i] > 0 {
			g[i] = (n + a.Chunks[i] - 1) / a.Chunks[i]
		}
	}
	return g
}

// Key returns the key of the chunk at grid index idx, relative to the
// array's directory.
func (a *Array) Key(idx []int) string {
	var b strings.Builder
	b.WriteString(a.Prefix)
	for i, v := range idx {
		if i > 0 || a.Prefix != "" {
			b.WriteString(a.Separator)
		}
		b.WriteString(strconv.Itoa(v))
	}
	if len(idx) == 0 && a.Prefix == "" {
		return "0" // a 0-d array's one chunk
	}
	return b.String()
}

// Open reads the metadata of the array at dir in fsys: zarr.json (format
// 3) or .zarray (format 2). Errors say what is missing, malformed or not
// supported, naming the file.
func Open(fsys fs.FS, dir string) (*Array, error) {
	name3, name2 := path.Join(dir, "zarr.json"), path.Join(dir, ".zarray")
	if raw, err := fs.ReadFile(fsys, name3); err == nil {
		a, err := parseV3(raw)
		if err != nil {
			return nil, fmt.Errorf("zarr.json: %w", err)
		}
		return a, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	raw, err := fs.ReadFile(fsys, name2)
	if errors.Is(err, fs.ErrNotExist) {
		if _, gerr := fs.Stat(fsys, path.Join(dir, ".zgroup")); gerr == nil {
			return nil, errors.New("is a Zarr group, not an array: name one of its arrays (\"g.zarr/name\")")
		}
		if _, serr := fs.Stat(fsys, dir); serr != nil {
			return nil, serr
		}
		return nil, errors.New("no .zarray nor zarr.json: not a Zarr array")
	}
	if err != nil {
		return nil, err
	}
	a, err := parseV2(raw)
	if err != nil {
		return nil, fmt.Errorf(".zarray: %w", err)
	}
	return a, nil
}

// rawValue keeps a JSON value as it was written: a number, a string
// ("NaN"), null, or anything else.
type rawValue = json.RawMessage

type zarrayDoc struct {
	ZarrFormat *int            `json:"zarr_format"`
	Shape      []int           `json:"shape"`
	Chunks     []int           `json:"chunks"`
	DType      json.RawMessage `json:"dtype"`
	Compressor json.RawMessage `json:"compressor"`
	FillValue  rawValue        `json:"fill_value"`
	Order      string          `json:"order"`
	Filters    json.RawMessage `json:"filters"`
	Separator  *string         `json:"dimension_separator"`
}

func parseV2(raw []byte) (*Array, error) {
	var d zarrayDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d.ZarrFormat == nil || *d.ZarrFormat != 2 {
		return nil, errors.New("zarr_format is not 2")
	}
	a := &Array{Format: 2, Shape: d.Shape, Chunks: d.Chunks, Separator: "."}
	if err := a.checkGrid(); err != nil {
		return nil, err
	}
	var descr string
	if err := json.Unmarshal(d.DType, &descr); err != nil {
		return nil, fmt.Errorf("dtype %s is not supported (structured)", d.DType)
	}
	var err error
	if a.DType, a.BigEndian, err = parseDescr(descr); err != nil {
		return nil, err
	}
	switch d.Order {
	case "C":
	case "F":
		a.Perm = make([]int, len(a.Shape))
		for i := range a.Perm {
			a.Perm[i] = len(a.Perm) - 1 - i
		}
	default:
		return nil, fmt.Errorf("order %q (C or F)", d.Order)
	}
	if d.Separator != nil {
		if *d.Separator != "." && *d.Separator != "/" {
			return nil, fmt.Errorf("dimension_separator %q (. or /)", *d.Separator)
		}
		a.Separator = *d.Separator
	}
	if f := bytes.TrimSpace(d.Filters); len(f) > 0 && !bytes.Equal(f, []byte("null")) && !bytes.Equal(f, []byte("[]")) {
		return nil, fmt.Errorf("filters %s are not supported", f)
	}
	if c := bytes.TrimSpace(d.Compressor); len(c) > 0 && !bytes.Equal(c, []byte("null")) {
		codec, err := parseV2Compressor(c)
		if err != nil {
			return nil, err
		}
		a.Codecs = []Codec{codec}
	}
	if a.Fill, err = parseFill(d.FillValue, a.DType, 2); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Array) checkGrid() error {
	if a.Shape == nil || a.Chunks == nil {
		return errors.New("shape or chunks missing")
	}
	if len(a.Chunks) != len(a.Shape) {
		return fmt.Errorf("chunks %v for shape %v", a.Chunks, a.Shape)
	}
	n := 1
	for i, s := range a.Shape {
		if s < 0 || a.Chunks[i] < 1 || s > 1<<50 || a.Chunks[i] > 1<<31 {
			return fmt.Errorf("chunks %v for shape %v", a.Chunks, a.Shape)
		}
		n *= a.Chunks[i]
		if n > maxChunk {
			return fmt.Errorf("chunks %v hold more than 2^31 elements", a.Chunks)
		}
	}
	return nil
}

// parseDescr reads a NumPy type string of format 2 ("<f8").
func parseDescr(s string) (tensor.DType, bool, error) {
	if len(s) < 3 {
		return 0, false, fmt.Errorf("dtype %q is not supported", s)
	}
	big := s[0] == '>'
	if !strings.ContainsRune("<>|=", rune(s[0])) {
		return 0, false, fmt.Errorf("dtype %q: byte order %q", s, s[0])
	}
	names := map[string]tensor.DType{"b1": tensor.Bool, "i1": tensor.Int8, "i2": tensor.Int16, "i4": tensor.Int32, "i8": tensor.Int64,
		"u1": tensor.Uint8, "u2": tensor.Uint16, "u4": tensor.Uint32, "u8": tensor.Uint64, "f2": tensor.Float16, "f4": tensor.Float32, "f8": tensor.Float64}
	dt, ok := names[s[1:]]
	if !ok {
		return 0, false, fmt.Errorf("dtype %q is not supported (bool, int, uint and float of 1 to 8 bytes are)", s)
	}
	return dt, big && dt.Size() > 1, nil
}

type v2Compressor struct {
	ID        string          `json:"id"`
	Level     *int            `json:"level"`
	Cname     string          `json:"cname"`
	Clevel    int             `json:"clevel"`
	Shuffle   json.RawMessage `json:"shuffle"`
	Blocksize int             `json:"blocksize"`
	Typesize  int             `json:"typesize"`
}

func parseV2Compressor(raw []byte) (Codec, error) {
	var c v2Compressor
	if err := json.Unmarshal(raw, &c); err != nil {
		return Codec{}, fmt.Errorf("compressor %s: %w", raw, err)
	}
	return codecOf(c, raw)
}

// codecOf checks a compressor's configuration, of either format.
func codecOf(c v2Compressor, raw []byte) (Codec, error) {
	codec := Codec{ID: c.ID}
	if c.Level != nil {
		codec.Level = *c.Level
	}
	switch c.ID {
	case "zlib", "gzip", "zstd", "lz4", "crc32c":
	case "blosc":
		if _, ok := bloscNames[c.Cname]; !ok {
			return codec, fmt.Errorf("blosc compressor %q is not supported", c.Cname)
		}
		codec.Cname, codec.Level, codec.Typesize = c.Cname, c.Clevel, c.Typesize
		var sh any
		json.Unmarshal(c.Shuffle, &sh)
		switch sh {
		case nil, 0.0, "noshuffle":
		case 1.0, "shuffle":
			codec.Shuffle = 1
		case 2.0, "bitshuffle":
			codec.Shuffle = 2
		case -1.0: // numcodecs' AUTOSHUFFLE: bits for bytes, else bytes
			codec.Shuffle = 1
		default:
			return codec, fmt.Errorf("blosc shuffle %s", c.Shuffle)
		}
	default:
		return codec, fmt.Errorf("codec %q is not supported (zlib, gzip, zstd, lz4, blosc are)", c.ID)
	}
	return codec, nil
}

// parseFill reads a fill value as the format writes it: a number, true or
// false, "NaN", "Infinity", "-Infinity", null (zeros), and on format 2 a
// base64 string of the element's bytes, on format 3 "0x..." of its bits.
func parseFill(raw rawValue, dt tensor.DType, format int) ([]byte, error) {
	fill := make([]byte, dt.Size())
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return fill, nil
	}
	bad := func() ([]byte, error) { return nil, fmt.Errorf("fill_value %s for %v", raw, dt) }
	var s string
	if json.Unmarshal(raw, &s) == nil {
		var f float64
		switch s {
		case "NaN":
			f = math.NaN()
		case "Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		default:
			var b []byte
			var err error
			if format == 3 && strings.HasPrefix(s, "0x") {
				b, err = hex.DecodeString(s[2:])
				slices.Reverse(b) // written big-endian
			} else {
				b, err = base64.StdEncoding.DecodeString(s)
			}
			if err != nil || len(b) != dt.Size() {
				return bad()
			}
			return b, nil
		}
		if !dt.IsFloat() {
			return bad()
		}
		setFloat(fill, dt, f)
		return fill, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			fill[0] = 1
		}
		return fill, nil
	}
	var num json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&num) != nil {
		return bad()
	}
	switch {
	case dt.IsFloat():
		f, err := num.Float64()
		if err != nil {
			return bad()
		}
		setFloat(fill, dt, f)
	case dt == tensor.Bool:
		f, err := num.Float64()
		if err != nil {
			return bad()
		}
		if f != 0 {
			fill[0] = 1
		}
	case dt.IsUint():
		u, err := strconv.ParseUint(num.String(), 10, 64)
		if err != nil {
			f, ferr := num.Float64()
			if ferr != nil || f != math.Trunc(f) || f < 0 {
				return bad()
			}
			u = uint64(f)
		}
		putUint(fill, u)
	default:
		i, err := strconv.ParseInt(num.String(), 10, 64)
		if err != nil {
			f, ferr := num.Float64()
			if ferr != nil || f != math.Trunc(f) {
				return bad()
			}
			i = int64(f)
		}
		putUint(fill, uint64(i))
	}
	return fill, nil
}

func setFloat(b []byte, dt tensor.DType, f float64) {
	if math.IsNaN(f) { // NumPy's NaN, not Go's (whose last bit is set)
		f = math.Float64frombits(0x7ff8000000000000)
	}
	switch dt {
	case tensor.Float64:
		binary.LittleEndian.PutUint64(b, math.Float64bits(f))
	case tensor.Float32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(f)))
	case tensor.Float16:
		binary.LittleEndian.PutUint16(b, uint16(tensor.HalfFromFloat32(float32(f))))
	}
}

// putUint writes the low len(b) bytes of u, little-endian.
func putUint(b []byte, u uint64) {
	for i := range b {
		b[i] = byte(u >> (8 * i))
	}
}
