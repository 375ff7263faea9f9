package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"marsfs/tensor"
)

type zarrJSON struct {
	ZarrFormat int    `json:"zarr_format"`
	NodeType   string `json:"node_type"`
	Shape      []int  `json:"shape"`
	DataType   any    `json:"data_type"`
	ChunkGrid  struct {
		Name   string `json:"name"`
		Config struct {
			ChunkShape []int `json:"chunk_shape"`
		} `json:"configuration"`
	} `json:"chunk_grid"`
	KeyEncoding struct {
		Name   string `json:"name"`
		Config struct {
			Separator string `json:"separator"`
		} `json:"configuration"`
	} `json:"chunk_key_encoding"`
	FillValue rawValue    `json:"fill_value"`
	Codecs    []codecJSON `json:"codecs"`
	Storage   []any       `json:"storage_transformers"`
}

type codecJSON struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"configuration,omitempty"`
}

var v3Types = map[string]tensor.DType{"bool": tensor.Bool, "int8": tensor.Int8, "int16": tensor.Int16, "int32": tensor.Int32,
	"int64": tensor.Int64, "uint8": tensor.Uint8, "uint16": tensor.Uint16, "uint32": tensor.Uint32, "uint64": tensor.Uint64,
	"float16": tensor.Float16, "float32": tensor.Float32, "float64": tensor.Float64}

func parseV3(raw []byte) (*Array, error) {
	var d zarrJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d.ZarrFormat != 3 {
		return nil, fmt.Errorf("zarr_format %d is not 3", d.ZarrFormat)
	}
	if d.NodeType == "group" {
		return nil, errors.New("is a Zarr group, not an array: name one of its arrays (\"g.zarr/name\")")
	}
	if d.NodeType != "array" {
		return nil, fmt.Errorf("node_type %q", d.NodeType)
	}
	if len(d.Storage) > 0 {
		return nil, errors.New("storage_transformers are not supported")
	}
	name, _ := d.DataType.(string)
	dt, ok := v3Types[name]
	if !ok {
		return nil, fmt.Errorf("data_type %v is not supported (bool, int, uint and float of 1 to 8 bytes are)", d.DataType)
	}
	if d.ChunkGrid.Name != "regular" {
		return nil, fmt.Errorf("chunk_grid %q is not supported (regular is)", d.ChunkGrid.Name)
	}
	a := &Array{Format: 3, Shape: d.Shape, Chunks: d.ChunkGrid.Config.ChunkShape, DType: dt}
	if err := a.checkGrid(); err != nil {
		return nil, err
	}
	sep := d.KeyEncoding.Config.Separator
	switch d.KeyEncoding.Name {
	case "default":
		a.Prefix, a.Separator = "c", "/"
	case "v2":
		a.Separator = "."
	default:
		return nil, fmt.Errorf("chunk_key_encoding %q is not supported (default and v2 are)", d.KeyEncoding.Name)
	}
	if sep != "" {
		if sep != "." && sep != "/" {
			return nil, fmt.Errorf("chunk key separator %q", sep)
		}
		a.Separator = sep
	}
	var err error
	if a.Fill, err = parseFill(d.FillValue, dt, 3); err != nil {
		return nil, err
	}
	if err := a.parseCodecs(d.Codecs); err != nil {
		return nil, err
	}
	return a, nil
}

// parseCodecs reads format 3's pipeline: transposes, then "bytes", then
// bytes-to-bytes codecs.
func (a *Array) parseCodecs(codecs []codecJSON) error {
	nd := len(a.Shape)
	seenBytes := false
	for _, c := range codecs {
		switch {
		case c.Name == "transpose":
			if seenBytes {
				return errors.New("codec transpose after bytes")
			}
			var cfg struct {
				Order json.RawMessage `json:"order"`
			}
			json.Unmarshal(c.Config, &cfg)
			var order []int
			var s string
			switch {
			case json.Unmarshal(cfg.Order, &order) == nil:
			case json.Unmarshal(cfg.Order, &s) == nil && (s == "C" || s == "F"):
				order = identity(nd)
				if s == "F" {
					slices.Reverse(order)
				}
			default:
				return fmt.Errorf("transpose order %s", cfg.Order)
			}
			if !isPerm(order, nd) {
				return fmt.Errorf("transpose order %v for %d axes", order, nd)
			}
			// Encoding transposes by the current Perm, then by order.
			cur := a.Perm
			if cur == nil {
				cur = identity(nd)
			}
			next := make([]int, nd)
			for k, o := range order {
				next[k] = cur[o]
			}
			a.Perm = next
		case c.Name == "bytes" || c.Name == "endian":
			if seenBytes {
				return errors.New("two array-to-bytes codecs")
			}
			seenBytes = true
			var cfg struct {
				Endian string `json:"endian"`
			}
			json.Unmarshal(c.Config, &cfg)
			switch cfg.Endian {
			case "little", "":
				if cfg.Endian == "" && a.DType.Size() > 1 {
					return errors.New("codec bytes without an endian for a type of several bytes")
				}
			case "big":
				a.BigEndian = a.DType.Size() > 1
			default:
				return fmt.Errorf("bytes endian %q", cfg.Endian)
			}
		case c.Name == "sharding_indexed":
			if seenBytes {
				return errors.New("two array-to-bytes codecs")
			}
			if a.Perm != nil {
				return errors.New("codec transpose before sharding_indexed is not supported")
			}
			seenBytes = true
			sh, err := parseShard(a, c.Config)
			if err != nil {
				return fmt.Errorf("sharding_indexed: %w", err)
			}
			a.Shard = sh
		default:
			if !seenBytes {
				return fmt.Errorf("codec %q before bytes", c.Name)
			}
			codec, err := parseV3Codec(c)
			if err != nil {
				return err
			}
			a.Codecs = append(a.Codecs, codec)
		}
	}
	if !seenBytes {
		return errors.New("no bytes codec")
	}
	if a.Perm != nil && slices.Equal(a.Perm, identity(nd)) {
		a.Perm = nil
	}
	return nil
}

func parseV3Codec(c codecJSON) (Codec, error) {
	var cfg v2Compressor
	if len(c.Config) > 0 {
		if err := json.Unmarshal(c.Config, &cfg); err != nil {
			return Codec{}, fmt.Errorf("codec %s: %w", c.Name, err)
		}
	}
	cfg.ID = strings.TrimPrefix(c.Name, "numcodecs.")
	if cfg.ID == "blosc" && cfg.Cname == "" {
		return Codec{}, errors.New("codec blosc without a cname")
	}
	raw, _ := json.Marshal(c)
	return codecOf(cfg, raw)
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func isPerm(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, v := range p {
		if v < 0 || v >= n || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

// New returns the array marsfs writes: shape chunked by chunks, of dt, in
// format (2 or 3), compressed by compressor ("zstd", "blosc", "zlib" or
// "" for none), C order and little-endian, fill 0. Format 3 keys use the
// default encoding ("c/1/2"); format 2's use ".". Format 3 has no zlib
// codec: there zlib is written as gzip, its standard codec of the same
// deflate stream.
func New(shape, chunks []int, dt tensor.DType, format int, compressor string) (*Array, error) {
	a := &Array{Format: format, Shape: slices.Clone(shape), Chunks: slices.Clone(chunks), DType: dt, Fill: make([]byte, dt.Size()), Separator: "."}
	if format == 3 {
		a.Prefix, a.Separator = "c", "/"
	} else if format != 2 {
		return nil, fmt.Errorf("zarr_format %d (2 or 3)", format)
	}
	if err := a.checkGrid(); err != nil {
		return nil, err
	}
	switch compressor {
	case "":
	case "zstd":
		a.Codecs = []Codec{{ID: "zstd", Level: 1}}
	case "zlib":
		a.Codecs = []Codec{{ID: "zlib", Level: 1}}
		if format == 3 {
			a.Codecs[0].ID = "gzip"
		}
	case "blosc":
		a.Codecs = []Codec{{ID: "blosc", Cname: "lz4", Level: 5, Shuffle: 1, Typesize: dt.Size()}}
	default:
		return nil, fmt.Errorf("compressor %q (zstd, blosc, zlib or None)", compressor)
	}
	return a, nil
}

// Metadata renders the array's metadata file (MetaName).
func (a *Array) Metadata() ([]byte, error) {
	fill, err := a.fillJSON()
	if err != nil {
		return nil, err
	}
	var doc any
	if a.Format == 2 {
		var comp any
		if len(a.Codecs) > 1 {
			return nil, errors.New("format 2 has one compressor")
		}
		if len(a.Codecs) == 1 {
			comp = a.Codecs[0].v2JSON()
		}
		order := "C"
		if a.Perm != nil {
			order = "F"
		}
		byteOrder := "<"
		if a.DType.Size() == 1 {
			byteOrder = "|"
		} else if a.BigEndian {
			byteOrder = ">"
		}
		doc = map[string]any{"zarr_format": 2, "shape": a.Shape, "chunks": a.Chunks, "dtype": byteOrder + descrCode(a.DType),
			"compressor": comp, "fill_value": fill, "order": order, "filters": nil, "dimension_separator": a.Separator}
	} else {
		endian := "little"
		if a.BigEndian {
			endian = "big"
		}
		codecs := []any{}
		if a.Perm != nil {
			codecs = append(codecs, map[string]any{"name": "transpose", "configuration": map[string]any{"order": a.Perm}})
		}
		codecs = append(codecs, map[string]any{"name": "bytes", "configuration": map[string]any{"endian": endian}})
		for _, c := range a.Codecs {
			codecs = append(codecs, c.v3JSON())
		}
		enc := map[string]any{"name": "v2", "configuration": map[string]any{"separator": a.Separator}}
		if a.Prefix == "c" {
			enc["name"] = "default"
		}
		doc = map[string]any{"zarr_format": 3, "node_type": "array", "shape": a.Shape, "data_type": a.DType.String(),
			"chunk_grid":         map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": a.Chunks}},
			"chunk_key_encoding": enc, "fill_value": fill, "codecs": codecs, "attributes": map[string]any{}}
	}
	return json.MarshalIndent(doc, "", "    ")
}

func descrCode(dt tensor.DType) string {
	switch {
	case dt == tensor.Bool:
		return "b1"
	case dt.IsInt():
		return fmt.Sprintf("i%d", dt.Size())
	case dt.IsUint():
		return fmt.Sprintf("u%d", dt.Size())
	}
	return fmt.Sprintf("f%d", dt.Size())
}

// fillJSON is the fill value as JSON writes it.
func (a *Array) fillJSON() (any, error) {
	if a.Fill == nil {
		return nil, nil // none: the store holds every chunk
	}
	t := tensor.NewArray(a.DType, []int{})
	copy(t.Data, a.Fill)
	switch {
	case a.DType == tensor.Bool:
		return t.Data[0] != 0, nil
	case a.DType.IsFloat():
		f := t.Float64At(0)
		switch {
		case math.IsNaN(f):
			return "NaN", nil
		case math.IsInf(f, 1):
			return "Infinity", nil
		case math.IsInf(f, -1):
			return "-Infinity", nil
		}
		return json.RawMessage(bytes.TrimSuffix([]byte(fmt.Sprintf("%v", f)), []byte(".0"))), nil
	case a.DType.IsUint():
		var u uint64
		for i, b := range a.Fill {
			u |= uint64(b) << (8 * i)
		}
		return u, nil
	}
	var u uint64
	for i, b := range a.Fill {
		u |= uint64(b) << (8 * i)
	}
	shift := 64 - 8*len(a.Fill)
	return int64(u<<shift) >> shift, nil
}

func (c Codec) v2JSON() any {
	switch c.ID {
	case "blosc":
		return map[string]any{"id": "blosc", "cname": c.Cname, "clevel": c.Level, "shuffle": c.Shuffle, "blocksize": 0}
	case "lz4":
		return map[string]any{"id": c.ID, "acceleration": 1}
	}
	return map[string]any{"id": c.ID, "level": c.Level}
}

func (c Codec) v3JSON() any {
	switch c.ID {
	case "blosc":
		shuffle := []string{"noshuffle", "shuffle", "bitshuffle"}[c.Shuffle]
		return map[string]any{"name": "blosc", "configuration": map[string]any{"cname": c.Cname, "clevel": c.Level,
			"shuffle": shuffle, "typesize": c.Typesize, "blocksize": 0}}
	case "zstd":
		return map[string]any{"name": "zstd", "configuration": map[string]any{"level": c.Level, "checksum": false}}
	case "crc32c":
		return map[string]any{"name": "crc32c"}
	case "gzip":
		return map[string]any{"name": "gzip", "configuration": map[string]any{"level": c.Level}}
	}
	return map[string]any{"name": "numcodecs." + c.ID, "configuration": map[string]any{"level": c.Level}}
}

// parseShard reads a sharding_indexed configuration of the array a, whose
// store chunks are the shards.
func parseShard(a *Array, raw json.RawMessage) (*Shard, error) {
	var cfg struct {
		ChunkShape    []int       `json:"chunk_shape"`
		Codecs        []codecJSON `json:"codecs"`
		IndexCodecs   []codecJSON `json:"index_codecs"`
		IndexLocation string      `json:"index_location"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	if len(cfg.ChunkShape) != len(a.Chunks) {
		return nil, fmt.Errorf("inner chunks %v in shards of %v", cfg.ChunkShape, a.Chunks)
	}
	for ax, c := range cfg.ChunkShape {
		if c < 1 || a.Chunks[ax]%c != 0 {
			return nil, fmt.Errorf("inner chunks %v do not divide shards of %v", cfg.ChunkShape, a.Chunks)
		}
	}
	sh := &Shard{Inner: Array{Format: 3, Shape: a.Chunks, Chunks: cfg.ChunkShape, DType: a.DType, Fill: a.Fill}}
	if err := sh.Inner.parseCodecs(cfg.Codecs); err != nil {
		return nil, err
	}
	switch cfg.IndexLocation {
	case "", "end":
	case "start":
		sh.IndexAtStart = true
	default:
		return nil, fmt.Errorf("index_location %q", cfg.IndexLocation)
	}
	// The index: uint64 pairs, little-endian, maybe checksummed.
	idx := Array{Format: 3, Shape: []int{1, 2}, Chunks: []int{1, 2}, DType: tensor.Uint64}
	if err := idx.parseCodecs(cfg.IndexCodecs); err != nil {
		return nil, fmt.Errorf("index_codecs: %w", err)
	}
	switch {
	case idx.BigEndian || idx.Perm != nil || idx.Shard != nil:
		return nil, errors.New("index_codecs other than little-endian bytes and crc32c are not supported")
	case len(idx.Codecs) == 1 && idx.Codecs[0].ID == "crc32c":
		sh.IndexCRC = true
	case len(idx.Codecs) > 0:
		return nil, errors.New("index_codecs other than little-endian bytes and crc32c are not supported")
	}
	return sh, nil
}
