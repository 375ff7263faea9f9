package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strconv"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// The JSON form of a spec is the lowered graph itself:
//
//	{"version": 1,
//	 "nodes": [
//	   {"id": 0, "op": "rand", "shape": [1000], "dtype": "float64",
//	    "chunks": [[500, 500]], "attrs": {"seed": 1}},
//	   {"id": 1, "op": "sum", "inputs": [0], "shape": [], "dtype": "float64"}],
//	 "outputs": [{"name": "s", "node": 1}]}
//
// Nodes may come in any order and their ids may be any distinct
// non-negative integers; inputs name ids. "attrs" holds only the non-zero
// fields of Attrs that the op uses, in snake case (int_value, keepdims,
// slices as [start, step, len] triples; "pending", the index as written of
// a slice whose input's length the data decides, one object an axis); a
// length the data decides is -1 in "shape"; non-finite floats are the strings
// "NaN", "Infinity" and "-Infinity". "weak" marks a scalar that came from a
// Python literal. The parser re-derives every node's shape and dtype through
// the same rules as the text form and checks that the document agrees; ops
// whose result their inputs do not fix carry it: creation ops their shape
// and dtype (and chunks, or the default chunking), "reshape" its shape,
// "astype" its dtype, "rechunk" its chunks.

// jsonVersion is the version of the JSON form this package reads and writes.
const jsonVersion = 1

type jsonGraph struct {
	Version int          `json:"version"`
	Nodes   []jsonNode   `json:"nodes"`
	Outputs []jsonOutput `json:"outputs"`
	Sinks   []jsonSink   `json:"sinks,omitempty"`
	Drops   []string     `json:"drops,omitempty"` // Graph.Drops
}

// jsonSink is a file the graph writes (Graph.Sinks).
type jsonSink struct {
	Node      int    `json:"node"`
	Format    string `json:"format"`
	Path      string `json:"path"`
	Overwrite bool   `json:"overwrite,omitempty"`
	// zarr: the compressor ("none" for None) and the format.
	Compressor string `json:"compressor,omitempty"`
	ZarrFormat int    `json:"zarr_format,omitempty"`
	// zarr: the dimensions' names and the attributes (an object).
	Dims  []string        `json:"dims,omitempty"`
	Attrs json.RawMessage `json:"attrs,omitempty"`
}

type jsonNode struct {
	ID     int             `json:"id"`
	Op     string          `json:"op"`
	Inputs []int           `json:"inputs,omitempty"`
	Shape  *[]int          `json:"shape,omitempty"`
	DType  string          `json:"dtype,omitempty"`
	Chunks *[][]int        `json:"chunks,omitempty"`
	Weak   bool            `json:"weak,omitempty"`
	Attrs  json.RawMessage `json:"attrs,omitempty"`
}

type jsonOutput struct {
	Name string `json:"name"`
	Node int    `json:"node"`
}

type jsonAttrs struct {
	Value    *jsonFloat `json:"value,omitempty"` // pointers, to keep -0
	IntValue int64      `json:"int_value,omitempty"`
	Start    *jsonFloat `json:"start,omitempty"`
	Step     *jsonFloat `json:"step,omitempty"`
	Low      int64      `json:"low,omitempty"`
	High     int64      `json:"high,omitempty"`
	K        int        `json:"k,omitempty"`
	Seed     uint64     `json:"seed,omitempty"`
	Axes     []int      `json:"axes,omitempty"`
	Keepdims bool       `json:"keepdims,omitempty"`
	Ddof     int        `json:"ddof,omitempty"`
	Decimals int        `json:"decimals,omitempty"`
	Perm     []int      `json:"perm,omitempty"`
	Slices   [][3]int   `json:"slices,omitempty"`
	Name     string     `json:"name,omitempty"`
	Path     string     `json:"path,omitempty"`

	Bins      int       `json:"bins,omitempty"`
	Range     []float64 `json:"range,omitempty"`
	Minlength int       `json:"minlength,omitempty"`
	Q         []float64 `json:"q,omitempty"`
	SkipNaN   bool      `json:"skip_nan,omitempty"`
	Data      []byte    `json:"data,omitempty"`
	Groups    int       `json:"groups,omitempty"`
	Func      string    `json:"func,omitempty"`

	Pending []jsonPending `json:"pending,omitempty"`
}

// jsonPending is one axis of a pending index: {"index": i} for an integer,
// {"lo": .., "hi": .., "step": ..} (each optional) for a slice.
type jsonPending struct {
	Index *int `json:"index,omitempty"`
	Lo    *int `json:"lo,omitempty"`
	Hi    *int `json:"hi,omitempty"`
	Step  *int `json:"step,omitempty"`
}

// jsonFloat is a float64 that writes NaN and ±Inf as strings.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Infinity"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// nonZero returns v for the JSON form, or nil for +0, which it leaves out.
func nonZero(v float64) *jsonFloat {
	if v == 0 && !math.Signbit(v) {
		return nil
	}
	f := jsonFloat(v)
	return &f
}

func (f *jsonFloat) float() float64 {
	if f == nil {
		return 0
	}
	return float64(*f)
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*f = jsonFloat(math.NaN())
		return nil
	case `"Infinity"`:
		*f = jsonFloat(math.Inf(1))
		return nil
	case `"-Infinity"`:
		*f = jsonFloat(math.Inf(-1))
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("%s is not a number", b)
	}
	*f = jsonFloat(v)
	return nil
}

// opAttrs lists the attributes each op uses; any other is an error.
var opAttrs = map[string][]string{
	tensor.OpInput: {"name"}, tensor.OpFromNPY: {"path"}, tensor.OpFromZarr: {"path"}, tensor.OpScalar: {"value", "int_value"}, tensor.OpFull: {"value", "int_value"},
	tensor.OpArange: {"start", "step"}, tensor.OpLinspace: {"start", "step"}, tensor.OpEye: {"k"},
	tensor.OpRand: {"seed"}, tensor.OpRandn: {"seed"}, tensor.OpRandint: {"low", "high", "seed"},
	tensor.OpUniform: {"start", "step", "seed"}, tensor.OpNormal: {"start", "step", "seed"},
	tensor.OpRound: {"decimals"}, tensor.OpVar: {"axes", "keepdims", "ddof"}, tensor.OpStd: {"axes", "keepdims", "ddof"},
	tensor.OpCumsum: {"axes"}, tensor.OpCumprod: {"axes"}, tensor.OpTranspose: {"perm"}, tensor.OpConcat: {"axes"},
	tensor.OpSlice:     {"slices", "pending"},
	tensor.OpHistogram: {"bins", "range"}, tensor.OpHistEdges: {"bins", "range"}, tensor.OpBincount: {"minlength"},
	tensor.OpPercentile: {"q", "skip_nan", "func"}, tensor.OpMedian: {"skip_nan"}, tensor.OpDiagonal: {"k"}, tensor.OpEighW: {"k"}, tensor.OpEighV: {"k"}, tensor.OpSearchsorted: {"k"}, tensor.OpArray: {"data"}, tensor.OpNonEmpty: {"name"},
	tensor.OpGroupBy: {"axes", "groups", "func", "ddof"},
}

// attrsOf returns the attributes op uses: a reduction's axes and keepdims
// unless opAttrs says more.
func attrsOf(op string) []string {
	if a, ok := opAttrs[op]; ok {
		return a
	}
	if reduceOps[op] {
		return []string{"axes", "keepdims"}
	}
	return nil
}

// JSON renders g in the JSON form; ParseJSON(g.JSON()) gives an equal graph.
func (g *Graph) JSON() ([]byte, error) {
	index := make(map[*Node]int, len(g.Nodes))
	doc := jsonGraph{Version: jsonVersion, Nodes: make([]jsonNode, 0, len(g.Nodes)), Outputs: make([]jsonOutput, 0, len(g.Outputs))}
	for i, n := range g.Nodes {
		index[n] = i
		jn := jsonNode{ID: i, Op: n.Op, DType: n.DType.String(), Weak: n.Weak}
		shape := CloneInts(n.Shape)
		jn.Shape = &shape
		for _, in := range n.Inputs {
			j, ok := index[in]
			if !ok {
				return nil, fmt.Errorf("graph: node %d has an input that does not come before it", i)
			}
			jn.Inputs = append(jn.Inputs, j)
		}
		if n.Chunks != nil {
			c := CloneChunks(n.Chunks)
			jn.Chunks = &c
		}
		a := n.Attrs
		ja := jsonAttrs{Value: nonZero(a.Value), IntValue: a.IntValue, Start: nonZero(a.Start),
			Step: nonZero(a.Step), Low: a.Low, High: a.High, K: a.K, Seed: a.Seed, Axes: a.Axes,
			Keepdims: a.Keepdims, Ddof: a.Ddof, Decimals: a.Decimals, Perm: a.Perm, Name: a.Name, Path: a.Path,
			Bins: a.Bins, Range: a.Range, Minlength: a.Minlength, Q: a.Q, SkipNaN: a.SkipNaN, Data: a.Data, Groups: a.Groups, Func: a.Func}
		for _, s := range a.Slices {
			ja.Slices = append(ja.Slices, [3]int{s.Start, s.Step, s.Len})
		}
		for _, p := range a.Pending {
			var jp jsonPending
			opt := func(v int, has bool) *int {
				if !has {
					return nil
				}
				return &v
			}
			if p.Int {
				jp.Index = opt(p.Lo, true)
			} else {
				jp.Lo, jp.Hi, jp.Step = opt(p.Lo, p.HasLo), opt(p.Hi, p.HasHi), opt(p.Step, p.HasStep)
			}
			ja.Pending = append(ja.Pending, jp)
		}
		raw, err := json.Marshal(ja)
		if err != nil {
			return nil, err
		}
		if string(raw) != "{}" {
			jn.Attrs = raw
		}
		doc.Nodes = append(doc.Nodes, jn)
	}
	for _, o := range g.Outputs {
		j, ok := index[o.Node]
		if !ok {
			return nil, fmt.Errorf("graph: output %s is not a node of the graph", o.Name)
		}
		doc.Outputs = append(doc.Outputs, jsonOutput{Name: o.Name, Node: j})
	}
	for _, s := range g.Sinks {
		j, ok := index[s.Node]
		if !ok {
			return nil, fmt.Errorf("graph: the sink of %s is not a node of the graph", s.Path)
		}
		js := jsonSink{Node: j, Format: s.Format, Path: s.Path, Overwrite: s.Overwrite}
		if s.Format == "zarr" {
			js.Compressor, js.ZarrFormat, js.Dims = s.Compressor, s.ZarrFormat, s.Dims
			if js.Compressor == "" {
				js.Compressor = "none"
			}
			if s.Attrs != "" {
				js.Attrs = json.RawMessage(s.Attrs)
			}
		}
		doc.Sinks = append(doc.Sinks, js)
	}
	doc.Drops = g.Drops
	return renderJSON(doc)
}

// renderJSON writes the document one node a line, which keeps long chunk
// lists readable.
func renderJSON(doc jsonGraph) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"version\": %d,\n \"nodes\": [", doc.Version)
	for i, n := range doc.Nodes {
		line, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		b.Write(line)
	}
	b.WriteString("],\n \"outputs\": [")
	for i, o := range doc.Outputs {
		line, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(line)
	}
	b.WriteString("]")
	if len(doc.Sinks) > 0 {
		line, err := json.Marshal(doc.Sinks)
		if err != nil {
			return nil, err
		}
		b.WriteString(",\n \"sinks\": ")
		b.Write(line)
	}
	if len(doc.Drops) > 0 {
		line, err := json.Marshal(doc.Drops)
		if err != nil {
			return nil, err
		}
		b.WriteString(",\n \"drops\": ")
		b.Write(line)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// ParseJSON parses the JSON form of a spec (a document starting with '{').
// Every error it returns is a *syntax.Error; errors about a node name it
// ("node 3: ..."), syntax errors carry the line and column.
func ParseJSON(src []byte, env Env) (*Graph, error) { return ParseJSONData(src, env, nil) }

// ParseJSONData is ParseJSON for a server with a data directory: data
// opens the files a graph's nodes read (nil: none may).
func ParseJSONData(src []byte, env Env, data fs.FS) (*Graph, error) {
	var doc jsonGraph
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, jsonSyntaxError(src, err)
	}
	if dec.More() {
		return nil, &syntax.Error{Msg: "json: data after the document"}
	}
	if doc.Version != jsonVersion {
		return nil, &syntax.Error{Msg: fmt.Sprintf("json: version %d is not supported (marsfs reads version %d)", doc.Version, jsonVersion)}
	}
	order, err := jsonOrder(doc.Nodes)
	if err != nil {
		return nil, err
	}
	g := &Graph{Source: string(src)}
	byID := make(map[int]*Node, len(doc.Nodes))
	for _, i := range order {
		jn := doc.Nodes[i]
		n, err := jsonNodeOf(jn, byID, env, data)
		if err != nil {
			return nil, &syntax.Error{Msg: fmt.Sprintf("node %d: %v", jn.ID, err)}
		}
		n.ID = len(g.Nodes)
		g.Nodes = append(g.Nodes, n)
		byID[jn.ID] = n
	}
	if len(doc.Outputs) == 0 && len(doc.Sinks) == 0 && len(doc.Drops) == 0 {
		return nil, &syntax.Error{Msg: "json: the document has no outputs"}
	}
	for _, name := range doc.Drops {
		if tt, ok := env.Lookup(name); !ok || tt == nil {
			return nil, &syntax.Error{Msg: fmt.Sprintf("drop %q: no session tensor of that name", name)}
		}
		if !slices.Contains(g.Drops, name) {
			g.Drops = append(g.Drops, name)
		}
	}
	for _, js := range doc.Sinks {
		n, ok := byID[js.Node]
		if !ok {
			return nil, &syntax.Error{Msg: fmt.Sprintf("sink %q: no node %d", js.Path, js.Node)}
		}
		sink := Sink{Format: js.Format, Path: js.Path, Overwrite: js.Overwrite, Node: n}
		switch js.Format {
		case "npy":
		case "zarr":
			sink.Compressor, sink.ZarrFormat, sink.Dims, sink.Attrs = js.Compressor, js.ZarrFormat, js.Dims, string(js.Attrs)
			if sink.Compressor == "none" {
				sink.Compressor = ""
			}
			if err := CheckZarrSink(sink); err != nil {
				return nil, &syntax.Error{Msg: fmt.Sprintf("sink %q: %v", js.Path, err)}
			}
		default:
			return nil, &syntax.Error{Msg: fmt.Sprintf("sink %q: unknown format %q", js.Path, js.Format)}
		}
		if err := CheckSink(data, sink); err != nil {
			return nil, &syntax.Error{Msg: fmt.Sprintf("sink %q: %v", js.Path, err)}
		}
		g.Sinks = append(g.Sinks, sink)
	}
	seen := map[string]bool{}
	for _, o := range doc.Outputs {
		n, ok := byID[o.Node]
		switch {
		case !validName(o.Name):
			return nil, &syntax.Error{Msg: fmt.Sprintf("output %q: not a valid name", o.Name)}
		case seen[o.Name]:
			return nil, &syntax.Error{Msg: fmt.Sprintf("output %s: named twice", o.Name)}
		case !ok:
			return nil, &syntax.Error{Msg: fmt.Sprintf("output %s: no node %d", o.Name, o.Node)}
		}
		seen[o.Name] = true
		g.Outputs = append(g.Outputs, Output{Name: o.Name, Node: n})
	}
	return g, nil
}

// validName reports whether s can name a tensor: an identifier that is not
// a keyword.
func validName(s string) bool {
	if s == "" || syntax.Keywords[s] {
		return false
	}
	for i, r := range s {
		if !syntax.IsLetter(r) && (i == 0 || !syntax.IsDigit(r)) {
			return false
		}
	}
	return true
}

// jsonSyntaxError turns a decoding error into a *syntax.Error at its line and
// column when it has an offset.
func jsonSyntaxError(src []byte, err error) error {
	off := int64(-1)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset - 1 // the offset is past the bad byte
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(src)) {
		return &syntax.Error{Msg: "json: " + err.Error()}
	}
	line, col := 1, 1
	for _, r := range string(src[:off]) {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &syntax.Error{Line: line, Col: col, Msg: "json: " + err.Error()}
}

// jsonOrder returns the indexes of nodes in a topological order (the
// document's order where it allows), checking ids and inputs.
func jsonOrder(nodes []jsonNode) ([]int, error) {
	pos := make(map[int]int, len(nodes))
	for i, n := range nodes {
		if n.ID < 0 {
			return nil, &syntax.Error{Msg: fmt.Sprintf("node %d: ids must not be negative", n.ID)}
		}
		if _, dup := pos[n.ID]; dup {
			return nil, &syntax.Error{Msg: fmt.Sprintf("node %d: id used twice", n.ID)}
		}
		pos[n.ID] = i
	}
	for _, n := range nodes {
		for _, in := range n.Inputs {
			if _, ok := pos[in]; !ok {
				return nil, &syntax.Error{Msg: fmt.Sprintf("node %d: input %d is not a node", n.ID, in)}
			}
		}
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := make([]int, len(nodes))
	order := make([]int, 0, len(nodes))
	// An explicit stack keeps deep graphs from exhausting the goroutine's.
	type frame struct{ i, next int }
	for root := range nodes {
		if state[root] != unvisited {
			continue
		}
		stack := []frame{{root, 0}}
		state[root] = visiting
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			ins := nodes[f.i].Inputs
			if f.next == len(ins) {
				state[f.i] = done
				order = append(order, f.i)
				stack = stack[:len(stack)-1]
				continue
			}
			j := pos[ins[f.next]]
			f.next++
			switch state[j] {
			case visiting:
				return nil, &syntax.Error{Msg: fmt.Sprintf("node %d: its inputs form a cycle through node %d", nodes[j].ID, nodes[f.i].ID)}
			case unvisited:
				state[j] = visiting
				stack = append(stack, frame{j, 0})
			}
		}
	}
	return order, nil
}

// givenShape, givenDType and givenChunks tell which ops take that part of
// their result from the document.
func givenShape(op string) bool  { return creationOps[op] || op == tensor.OpReshape }
func givenDType(op string) bool  { return creationOps[op] || op == tensor.OpAstype }
func givenChunks(op string) bool { return creationOps[op] || op == tensor.OpRechunk }

// jsonNodeOf builds and checks one node whose inputs are built.
func jsonNodeOf(jn jsonNode, byID map[int]*Node, env Env, data fs.FS) (*Node, error) {
	if _, ok := arity(jn.Op); !ok {
		return nil, fmt.Errorf("unknown op %q", jn.Op)
	}
	n := &Node{Op: jn.Op, Weak: jn.Weak}
	for _, in := range jn.Inputs {
		n.Inputs = append(n.Inputs, byID[in])
	}
	if jn.Weak && jn.Op != tensor.OpScalar {
		return nil, fmt.Errorf("only scalars can be weak")
	}
	if err := jsonAttrsOf(jn, &n.Attrs); err != nil {
		return nil, err
	}
	var dt tensor.DType
	if jn.DType != "" {
		var err error
		if dt, err = tensor.ParseDType(jn.DType); err != nil {
			return nil, err
		}
	}
	var shape []int
	if jn.Shape != nil {
		shape = CloneInts(*jn.Shape)
	}
	if givenShape(jn.Op) {
		if jn.Shape == nil && jn.Op != tensor.OpScalar && jn.Op != tensor.OpInput && jn.Op != tensor.OpFromNPY && jn.Op != tensor.OpFromZarr {
			return nil, fmt.Errorf("%s needs a shape", jn.Op)
		}
		n.Shape = CloneInts(shape)
	}
	if givenDType(jn.Op) {
		if jn.DType == "" && jn.Op != tensor.OpInput && jn.Op != tensor.OpFromNPY && jn.Op != tensor.OpFromZarr {
			return nil, fmt.Errorf("%s needs a dtype", jn.Op)
		}
		n.DType = dt
	}
	if jn.Chunks != nil {
		if !givenChunks(jn.Op) {
			return nil, fmt.Errorf("%s does not take chunks", jn.Op)
		}
		n.Chunks = CloneChunks(*jn.Chunks)
	}
	switch {
	case jn.Op == tensor.OpInput:
		if err := jsonInput(n, jn, env); err != nil {
			return nil, err
		}
	case jn.Op == tensor.OpFromNPY || jn.Op == tensor.OpFromZarr:
		// The file's header says what it holds, whatever the document
		// says: the document must agree.
		var f *Node
		var err error
		if jn.Op == tensor.OpFromNPY {
			f, err = NPYNode(data, n.Attrs.Path)
		} else {
			f, err = ZarrNode(data, n.Attrs.Path)
		}
		if err != nil {
			return nil, err
		}
		if jn.Shape != nil && !slices.Equal(*jn.Shape, f.Shape) || jn.DType != "" && n.DType != f.DType {
			return nil, fmt.Errorf("%s %q holds %s%s, not %s%s", jn.Op, n.Attrs.Path, f.DType, ShapeString(f.Shape), jn.DType, ShapeString(n.Shape))
		}
		n.Shape, n.DType, n.Attrs = f.Shape, f.DType, f.Attrs
		if n.Chunks == nil && jn.Op == tensor.OpFromZarr {
			n.Chunks = StoreChunks(f.Attrs.Zarr)
		} else if n.Chunks == nil {
			if n.Chunks, err = defaultChunks(n.Shape); err != nil {
				return nil, err
			}
		}
	case creationOps[jn.Op] && n.Chunks == nil:
		if err := checkShape(n.Shape); err != nil {
			return nil, err
		}
		c, err := defaultChunks(n.Shape)
		if err != nil {
			return nil, err
		}
		n.Chunks = c
	case jn.Op == tensor.OpRechunk && n.Chunks == nil:
		return nil, fmt.Errorf("rechunk needs chunks")
	}
	if err := checkFill(n); err != nil {
		return nil, err
	}
	if err := infer(n); err != nil {
		return nil, err
	}
	if jn.Shape != nil && !slices.Equal(shape, n.Shape) {
		return nil, fmt.Errorf("shape %s does not match the inferred %s", ShapeString(shape), ShapeString(n.Shape))
	}
	if jn.DType != "" && dt != n.DType {
		return nil, fmt.Errorf("dtype %s does not match the inferred %s", dt, n.DType)
	}
	return n, nil
}

// maxDims bounds the dimensions of a tensor in a JSON document.
const maxDims = 64

func jsonInput(n *Node, jn jsonNode, env Env) error {
	var tt *tensor.TiledTensor
	ok := false
	if env != nil {
		tt, ok = env.Lookup(n.Attrs.Name)
	}
	if !ok || tt == nil {
		return fmt.Errorf("unknown name %s", n.Attrs.Name)
	}
	if jn.Shape != nil && !slices.Equal(*jn.Shape, tt.Shape) {
		return fmt.Errorf("input %s has shape %s, not %s", n.Attrs.Name, ShapeString(tt.Shape), ShapeString(*jn.Shape))
	}
	if jn.DType != "" && n.DType != tt.DType {
		return fmt.Errorf("input %s has dtype %s, not %s", n.Attrs.Name, tt.DType, n.DType)
	}
	if jn.Chunks != nil && !equalChunks(*jn.Chunks, tt.Chunks) {
		return fmt.Errorf("input %s has chunks %v, not %v", n.Attrs.Name, tt.Chunks, *jn.Chunks)
	}
	n.Shape, n.DType, n.Chunks = CloneInts(tt.Shape), tt.DType, CloneChunks(tt.Chunks)
	return nil
}

func equalChunks(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

// checkFill checks that a scalar's or a fill's value is stored in the field
// its dtype uses, and fits the dtype.
func checkFill(n *Node) error {
	if n.Op != tensor.OpScalar && n.Op != tensor.OpFull {
		return nil
	}
	a := n.Attrs
	switch {
	case n.DType.IsFloat() && a.IntValue != 0:
		return fmt.Errorf("a %s value goes in \"value\", not \"int_value\"", n.DType)
	case !n.DType.IsFloat() && a.Value != 0:
		return fmt.Errorf("a %s value goes in \"int_value\", not \"value\"", n.DType)
	case n.DType == tensor.Bool && a.IntValue != 0 && a.IntValue != 1:
		return fmt.Errorf("a bool value is 0 or 1, not %d", a.IntValue)
	case n.DType.IsInteger() && (a.IntValue > intHi(n.DType) || a.IntValue < intLo(n.DType)):
		return fmt.Errorf("%d is out of range for %s", a.IntValue, n.DType)
	case n.Op == tensor.OpScalar && n.DType != tensor.Bool && n.DType != tensor.Int64 && n.DType != tensor.Float64 && n.Weak:
		return fmt.Errorf("a weak scalar is bool, int64 or float64")
	}
	return nil
}

// jsonAttrsOf decodes a node's attrs, allowing only those its op uses.
func jsonAttrsOf(jn jsonNode, a *Attrs) error {
	if len(jn.Attrs) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(jn.Attrs, &fields); err != nil {
		return fmt.Errorf("attrs: %v", err)
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !slices.Contains(attrsOf(jn.Op), k) {
			return fmt.Errorf("%s takes no attribute %q", jn.Op, k)
		}
	}
	var ja jsonAttrs
	dec := json.NewDecoder(bytes.NewReader(jn.Attrs))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ja); err != nil {
		return fmt.Errorf("attrs: %v", err)
	}
	*a = Attrs{Value: ja.Value.float(), IntValue: ja.IntValue, Start: ja.Start.float(),
		Step: ja.Step.float(), Low: ja.Low, High: ja.High, K: ja.K, Seed: ja.Seed, Axes: ja.Axes,
		Keepdims: ja.Keepdims, Ddof: ja.Ddof, Decimals: ja.Decimals, Perm: ja.Perm, Name: ja.Name, Path: ja.Path,
		Bins: ja.Bins, Range: ja.Range, Minlength: ja.Minlength, Q: ja.Q, SkipNaN: ja.SkipNaN, Data: ja.Data, Groups: ja.Groups, Func: ja.Func}
	for _, s := range ja.Slices {
		a.Slices = append(a.Slices, tensor.Slice{Start: s[0], Step: s[1], Len: s[2]})
	}
	for _, jp := range ja.Pending {
		var p PendingSlice
		val := func(v *int) (int, bool) {
			if v == nil {
				return 0, false
			}
			return *v, true
		}
		if jp.Index != nil {
			if jp.Lo != nil || jp.Hi != nil || jp.Step != nil {
				return fmt.Errorf("attrs: a pending axis is an index or a slice, not both")
			}
			p.Lo, p.Int = *jp.Index, true
		} else {
			p.Lo, p.HasLo = val(jp.Lo)
			p.Hi, p.HasHi = val(jp.Hi)
			p.Step, p.HasStep = val(jp.Step)
			if p.HasStep && p.Step == 0 {
				return fmt.Errorf("attrs: slice step cannot be zero")
			}
		}
		a.Pending = append(a.Pending, p)
	}
	return nil
}

func intLo(d tensor.DType) int64 { lo, _ := d.IntRange(); return lo }
func intHi(d tensor.DType) int64 { _, hi := d.IntRange(); return hi }
