package lang

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"marsfs/tensor/spec"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Data on disk: from_npy names a .npy file in the server's data directory
// (Parse's data), whose header is read when the spec is parsed; the workers
// read the chunks' bytes from the file themselves (see tile and kernel).

func registerFiles(l *library) {
	l.register("to_npy", []string{"x", "path", "overwrite"}, func(c *call) (value, error) {
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
		sink := spec.Sink{Format: "npy", Path: path, Overwrite: overwrite, Node: x}
		if err := spec.CheckSink(c.b.data, sink); err != nil {
			return nil, c.errorf(1, "to_npy: %w", err)
		}
		if tensor.HasUnknown(x.Shape) {
			return nil, c.errorf(0, "to_npy: the shape of what it writes is known only once the data are (%s)", spec.ShapeString(x.Shape))
		}
		return sinkValue{sink}, nil
	})
	l.register("to_zarr", []string{"x", "path", "compressor", "zarr_format", "overwrite", "dims", "attrs"}, func(c *call) (value, error) {
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
		sink := spec.Sink{Format: "zarr", Path: path, Overwrite: overwrite, Node: x, Compressor: comp, ZarrFormat: format}
		if c.has(5) {
			if sink.Dims, err = c.names(5); err != nil {
				return nil, err
			}
		}
		if c.has(6) {
			d, ok := c.args[6].v.(dictValue)
			if !ok {
				return nil, c.errorf(6, "to_zarr(): attrs must be a dict, not %s", typeName(c.args[6].v))
			}
			raw, err := d.json()
			if err != nil {
				return nil, err
			}
			sink.Attrs = string(raw)
		}
		if err := spec.CheckZarrSink(sink); err != nil {
			at := 2
			switch {
			case c.has(5) && strings.Contains(err.Error(), "dims="):
				at = 5
			case c.has(6) && strings.HasPrefix(err.Error(), "attrs"):
				at = 6
			}
			return nil, c.errorf(at, "to_zarr: %w", err)
		}
		if err := spec.CheckSink(c.b.data, sink); err != nil {
			return nil, c.errorf(1, "to_zarr: %w", err)
		}
		if tensor.HasUnknown(x.Shape) {
			return nil, c.errorf(0, "to_zarr: the shape of what it writes is known only once the data are (%s)", spec.ShapeString(x.Shape))
		}
		return sinkValue{sink}, nil
	})
	l.register("from_zarr", []string{"path", "chunks"}, func(c *call) (value, error) {
		if !c.has(0) {
			return nil, c.missing(0)
		}
		path, err := c.str(0)
		if err != nil {
			return nil, err
		}
		n, err := spec.ZarrNode(c.b.data, path)
		if err != nil {
			return nil, c.errorf(0, "from_zarr: %w", err)
		}
		if c.has(1) {
			n.Chunks, err = c.chunks(1, n.Shape)
		} else {
			n.Chunks = spec.StoreChunks(n.Attrs.Zarr)
			err = checkCount(n.Chunks, n.Shape, c.pos, c.b.maxChunks)
		}
		if err != nil {
			return nil, err
		}
		return c.b.AddAt(c.pos, n)
	})
	l.register("from_npy", []string{"path", "chunks"}, func(c *call) (value, error) {
		if !c.has(0) {
			return nil, c.missing(0)
		}
		path, err := c.str(0)
		if err != nil {
			return nil, err
		}
		n, err := spec.NPYNode(c.b.data, path)
		if err != nil {
			return nil, c.errorf(0, "from_npy: %w", err)
		}
		if n.Chunks, err = c.chunks(1, n.Shape); err != nil {
			return nil, err
		}
		return c.b.AddAt(c.pos, n)
	})
}

// sinkValue is what a statement function (to_npy) evaluates to: a file
// the graph writes. It is a statement of its own, never a value to assign.
type sinkValue struct{ sink spec.Sink }

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

// names reads argument i as a tuple or list of strings (one string alone
// is a tuple of one): dimension names.
func (c *call) names(i int) ([]string, error) {
	switch v := c.args[i].v.(type) {
	case string:
		return []string{v}, nil
	case seqValue:
		out := make([]string, len(v.elts))
		for j, e := range v.elts {
			s, ok := e.(string)
			if !ok {
				return nil, syntax.Errorf(v.pos[j], "%s(): %s holds strings, not %s", c.name, c.f.params[i], typeName(e))
			}
			out[j] = s
		}
		return out, nil
	}
	return nil, c.errorf(i, "%s(): %s must be a tuple of strings, not %s", c.name, c.f.params[i], typeName(c.args[i].v))
}

// json renders a dict display as a JSON object. Its values are numbers
// (finite: JSON has no NaN), strings, booleans, None, and tuples, lists
// and dicts of them.
func (d dictValue) json() ([]byte, error) {
	var b strings.Builder
	var put func(v value, p syntax.SrcPos) error
	put = func(v value, p syntax.SrcPos) error {
		switch v := v.(type) {
		case string:
			q, _ := json.Marshal(v)
			b.Write(q)
		case noneValue:
			b.WriteString("null")
		case syntax.PyNum:
			switch {
			case v.Dt == tensor.Bool:
				b.WriteString(strconv.FormatBool(v.I != 0))
			case v.IsFloat():
				if math.IsNaN(v.F) || math.IsInf(v.F, 0) {
					return syntax.Errorf(p, "attrs: %v cannot be written in JSON", v.F)
				}
				b.WriteString(strconv.FormatFloat(v.F, 'g', -1, 64))
			default:
				b.WriteString(strconv.FormatInt(v.I, 10))
			}
		case seqValue:
			b.WriteByte('[')
			for j, e := range v.elts {
				if j > 0 {
					b.WriteByte(',')
				}
				if err := put(e, v.pos[j]); err != nil {
					return err
				}
			}
			b.WriteByte(']')
		case dictValue:
			b.WriteByte('{')
			for j, k := range v.keys {
				if j > 0 {
					b.WriteByte(',')
				}
				q, _ := json.Marshal(k)
				b.Write(q)
				b.WriteByte(':')
				if err := put(v.vals[j], v.vpos[j]); err != nil {
					return err
				}
			}
			b.WriteByte('}')
		default:
			return syntax.Errorf(p, "attrs: a %s cannot be an attribute (numbers, strings, booleans, None, and lists and dicts of them can)", typeName(v))
		}
		return nil
	}
	if err := put(d, d.pos); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
