package lang

import (
	"fmt"
	"io/fs"
	"marsfs/tensor/spec"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// ParseText parses a spec in the text form (docs/marsfs.4.md, SPECS) into a Graph. Names
// not assigned by the spec are looked up in env (may be nil) and become
// OpInput nodes. Every error it returns is a *syntax.Error naming the line and
// column of the offending token.
func ParseText(src string, env spec.Env) (*spec.Graph, error) { return parseText(src, env, Options{}) }

func parseText(src string, env spec.Env, opt Options) (*spec.Graph, error) {
	stmts, err := syntax.ParseStmts(src)
	if err != nil {
		return nil, err
	}
	b := newBuilder(env)
	b.data = opt.Data
	b.maxChunks = opt.maxChunks()
	st, err := b.statements(stmts)
	if err != nil {
		return nil, err
	}
	if st.last == nil && len(st.fetch) == 0 && len(b.sinks) == 0 && len(b.drops) == 0 {
		return nil, syntax.Errorf(syntax.SrcPos{Line: 1, Col: 1}, "the spec assigns nothing: write name = expression")
	}
	// Outputs: the names fetch lines list (none for fetch alone); without
	// a fetch line, the last name assigned, unless the last statement
	// other than del writes a file, or del removed that name.
	fetch := st.fetch
	if !st.fetched && st.last != nil && !st.writes {
		if _, bound := b.vars[st.last.Name]; bound {
			fetch = []syntax.NameExpr{*st.last}
		}
	}
	outs, err := b.outputs(fetch, map[string]bool{})
	if err != nil {
		return nil, err
	}
	return b.Graph(outs, b.sinks, b.drops, src), nil
}

// built is what statements found in a spec's statements.
type built struct {
	fetch   []syntax.NameExpr // the names its fetch lines list
	fetched bool              // it has a fetch line (fetch alone lists none)
	last    *syntax.NameExpr  // the last name it assigns
	writes  bool              // a statement writing a file follows last
}

// statements builds stmts in order, and says what they fetch and assign.
func (b *builder) statements(stmts []syntax.Stmt) (built, error) {
	var st built
	for i, s := range stmts {
		switch {
		case s.Fetch:
			st.fetched = true
			st.fetch = append(st.fetch, s.Targets...)
			continue
		case s.Del:
			if err := b.del(s.Targets); err != nil {
				return built{}, err
			}
			continue
		case s.Expr:
			if err := b.statement(s); err != nil {
				return built{}, err
			}
			st.writes = true
			continue
		}
		if err := b.assign(s); err != nil {
			return built{}, err
		}
		st.last, st.writes = &stmts[i].Targets[len(s.Targets)-1], false
	}
	return st, nil
}

// outputs are the tensors of the names fetch names, none twice: seen holds
// the names fetched before, and gains these.
func (b *builder) outputs(fetch []syntax.NameExpr, seen map[string]bool) ([]spec.Output, error) {
	var outs []spec.Output
	for _, f := range fetch {
		if seen[f.Name] {
			return nil, syntax.Errorf(f.Pos, "%s is fetched twice", f.Name)
		}
		seen[f.Name] = true
		v, err := b.lookup(f.Name, f.Pos)
		if err != nil {
			return nil, err
		}
		n, err := b.tensor(v, f.Pos)
		if err != nil {
			return nil, syntax.Errorf(f.Pos, "cannot fetch %s: %s", f.Name, syntax.ErrAt(f.Pos, err).Msg)
		}
		outs = append(outs, spec.Output{Name: f.Name, Node: n})
	}
	return outs, nil
}

// Parse parses either form: JSON if IsJSON, else text.
func Parse(src string, env spec.Env) (*spec.Graph, error) { return ParseData(src, env, nil) }

// ParseData is Parse for a server with a data directory: data opens the
// files a spec names (from_npy), by slash-separated paths relative to the
// directory; a spec that names a file is refused when data is nil.
func ParseData(src string, env spec.Env, data fs.FS) (*spec.Graph, error) {
	return ParseWith(src, env, Options{Data: data})
}

// Options are what a server tells the parser: its data directory, and
// the most chunks a tensor may have.
type Options struct {
	// Data opens the files a spec names, as ParseData's data.
	Data fs.FS
	// MaxChunks bounds the chunks a chunks= argument (or a store's
	// chunking) may cut one tensor into, refused with the numbers past
	// it: the operands the server has the memory for. 0 is
	// spec.MaxChunks.
	MaxChunks int
}

func (o Options) maxChunks() int {
	if o.MaxChunks <= 0 || o.MaxChunks > spec.MaxChunks {
		return spec.MaxChunks
	}
	return o.MaxChunks
}

// ParseWith is Parse under opt.
func ParseWith(src string, env spec.Env, opt Options) (*spec.Graph, error) {
	if spec.IsJSON(src) {
		return spec.ParseJSONData([]byte(src), env, opt.Data)
	}
	return parseText(src, env, opt)
}

// A value is what a spec expression evaluates to: a tensor (*Node), a Python
// number (pyNum), a string, None, Ellipsis, a tuple or list (seqValue), a
// dtype (dtypeValue) or, inside subscripts, a slice (sliceValue).
type value any

type (
	noneValue     struct{}
	ellipsisValue struct{}
	dtypeValue    tensor.DType
	seqValue      struct {
		elts []value
		pos  []syntax.SrcPos
		list bool
	}
	sliceValue struct {
		lo, hi, step value
	}
	// dictValue is a dict display: the attributes to_zarr writes.
	dictValue struct {
		pos  syntax.SrcPos
		keys []string
		vals []value
		vpos []syntax.SrcPos
	}
)

// typeName names a value's type in messages, in Python's words.
func typeName(v value) string {
	switch v := v.(type) {
	case *spec.Node:
		return "tensor"
	case syntax.PyNum:
		return v.TypeName()
	case string:
		return "str"
	case noneValue:
		return "NoneType"
	case ellipsisValue:
		return "ellipsis"
	case dtypeValue:
		return "dtype"
	case seqValue:
		if v.list {
			return "list"
		}
		return "tuple"
	case sliceValue:
		return "slice"
	case dictValue:
		return "dict"
	case groupbyValue:
		return "groupby"
	}
	return fmt.Sprintf("%T", v)
}

// A builder evaluates a spec's statements onto a spec.Builder.
type builder struct {
	*spec.Builder
	lib    *library // the functions and methods calls name
	env    spec.Env
	data   fs.FS       // the data directory, nil for none
	sinks  []spec.Sink // the files the spec writes
	vars   map[string]value
	inputs map[string]*spec.Node // OpInput nodes by session tensor name
	// deleted holds the names del removed (the spec's or the session's);
	// drops the session's tensors among them, in the spec's order.
	deleted map[string]bool
	drops   []string
	// maxChunks bounds the chunks of a tensor given chunks= (Options).
	maxChunks int
}

func newBuilder(env spec.Env) *builder {
	return &builder{Builder: &spec.Builder{}, lib: lib, env: env, vars: map[string]value{}, inputs: map[string]*spec.Node{}, deleted: map[string]bool{}, maxChunks: spec.MaxChunks}
}

func (b *builder) assign(s syntax.Stmt) error {
	v, err := b.eval(s.Value)
	if err != nil {
		return err
	}
	if _, ok := v.(sinkValue); ok {
		return syntax.Errorf(s.Pos, "writing a file is a statement of its own: write it without %s =", s.Targets[0].Name)
	}
	if s.AugOp != "" {
		t := s.Targets[0]
		old, err := b.lookup(t.Name, t.Pos)
		if err != nil {
			return err
		}
		if v, err = b.binary(s.AugPos, s.AugOp, old, v); err != nil {
			return err
		}
	}
	if len(s.Targets) == 1 {
		b.vars[s.Targets[0].Name] = v
		return nil
	}
	seq, ok := v.(seqValue)
	if !ok {
		return syntax.Errorf(s.Pos, "cannot unpack a %s into %d names", typeName(v), len(s.Targets))
	}
	if len(seq.elts) != len(s.Targets) {
		return syntax.Errorf(s.Pos, "cannot unpack %d values into %d names", len(seq.elts), len(s.Targets))
	}
	for i, t := range s.Targets {
		b.vars[t.Name] = seq.elts[i]
	}
	return nil
}

// del removes names: the spec's own, which are then unbound, and the
// session's tensors, which the graph drops when it succeeds.
func (b *builder) del(names []syntax.NameExpr) error {
	for _, n := range names {
		_, own := b.vars[n.Name]
		_, kept := b.lookupEnv(n.Name)
		switch {
		case b.deleted[n.Name] && !own:
			return syntax.Errorf(n.Pos, "unknown name %s (del removed it)", n.Name)
		case !own && !kept:
			return syntax.Errorf(n.Pos, "unknown name %s", n.Name)
		}
		delete(b.vars, n.Name)
		if kept && !slices.Contains(b.drops, n.Name) {
			b.drops = append(b.drops, n.Name)
		}
		b.deleted[n.Name] = true
	}
	return nil
}

// constants are the names a spec can use without assigning them.
var constants = map[string]value{
	"inf": syntax.PyFloat(math.Inf(1)), "Inf": syntax.PyFloat(math.Inf(1)), "infty": syntax.PyFloat(math.Inf(1)),
	"nan": syntax.PyFloat(math.NaN()), "NaN": syntax.PyFloat(math.NaN()), "NAN": syntax.PyFloat(math.NaN()),
	"pi": syntax.PyFloat(3.141592653589793), "e": syntax.PyFloat(2.718281828459045),
	"newaxis": noneValue{},
	"float16": dtypeValue(tensor.Float16), "half": dtypeValue(tensor.Float16),
	"float32": dtypeValue(tensor.Float32), "float64": dtypeValue(tensor.Float64),
	"int8": dtypeValue(tensor.Int8), "int16": dtypeValue(tensor.Int16),
	"int32": dtypeValue(tensor.Int32), "int64": dtypeValue(tensor.Int64),
	"uint8": dtypeValue(tensor.Uint8), "uint16": dtypeValue(tensor.Uint16),
	"uint32": dtypeValue(tensor.Uint32), "uint64": dtypeValue(tensor.Uint64),
	"bool": dtypeValue(tensor.Bool), "bool_": dtypeValue(tensor.Bool),
	"float": dtypeValue(tensor.Float64), "float_": dtypeValue(tensor.Float64), "double": dtypeValue(tensor.Float64),
	"int": dtypeValue(tensor.Int64), "int_": dtypeValue(tensor.Int64),
}

// lookup resolves a name: the spec's own names first, then the session's
// tensors, then constants.
func (b *builder) lookup(name string, p syntax.SrcPos) (value, error) {
	if v, ok := b.vars[name]; ok {
		return v, nil
	}
	if b.deleted[name] {
		return nil, syntax.Errorf(p, "unknown name %s (del removed it)", name)
	}
	if n, ok := b.inputs[name]; ok {
		return n, nil
	}
	if b.env != nil {
		if tt, ok := b.env.Lookup(name); ok && tt != nil {
			n := &spec.Node{Op: tensor.OpInput, Shape: spec.CloneInts(tt.Shape), DType: tt.DType, Chunks: spec.CloneChunks(tt.Chunks), Attrs: spec.Attrs{Name: name}}
			if _, err := b.Add(n); err != nil {
				return nil, syntax.Errorf(p, "session tensor %s: %v", name, err)
			}
			b.inputs[name] = n
			return n, nil
		}
	}
	if v, ok := constants[name]; ok {
		return v, nil
	}
	if _, ok := b.lib.functions[name]; ok {
		return nil, syntax.Errorf(p, "%s is a function: call it, %s(...)", name, name)
	}
	return nil, syntax.Errorf(p, "unknown name %s", name)
}

func (b *builder) eval(e syntax.Expr) (value, error) {
	switch e := e.(type) {
	case *syntax.NameExpr:
		return b.lookup(e.Name, e.Pos)
	case *syntax.NumExpr:
		return e.Num, nil
	case *syntax.StrExpr:
		return e.S, nil
	case *syntax.ConstExpr:
		switch e.Tok {
		case "True":
			return syntax.PyBool(true), nil
		case "False":
			return syntax.PyBool(false), nil
		case "None":
			return noneValue{}, nil
		}
		return ellipsisValue{}, nil
	case *syntax.SeqExpr:
		s := seqValue{list: e.List}
		for _, x := range e.Elts {
			v, err := b.eval(x)
			if err != nil {
				return nil, err
			}
			s.elts = append(s.elts, v)
			s.pos = append(s.pos, x.At())
		}
		return s, nil
	case *syntax.DictExpr:
		d := dictValue{pos: e.At()}
		for i, k := range e.Keys {
			kv, err := b.eval(k)
			if err != nil {
				return nil, err
			}
			ks, ok := kv.(string)
			if !ok {
				return nil, syntax.Errorf(k.At(), "a dict's keys are strings, not %s", typeName(kv))
			}
			v, err := b.eval(e.Vals[i])
			if err != nil {
				return nil, err
			}
			d.keys, d.vals, d.vpos = append(d.keys, ks), append(d.vals, v), append(d.vpos, e.Vals[i].At())
		}
		return d, nil
	case *syntax.UnaryExpr:
		x, err := b.eval(e.X)
		if err != nil {
			return nil, err
		}
		return b.unary(e.Pos, e.Op, x)
	case *syntax.BinaryExpr:
		x, err := b.eval(e.X)
		if err != nil {
			return nil, err
		}
		y, err := b.eval(e.Y)
		if err != nil {
			return nil, err
		}
		return b.binary(e.Pos, e.Op, x, y)
	case *syntax.CallExpr:
		return b.call(e)
	case *syntax.AttrExpr:
		return b.attr(e)
	case *syntax.IndexExpr:
		return b.index(e)
	case *syntax.SliceExpr:
		return nil, syntax.Errorf(e.Pos, "a slice is only allowed inside [ ]")
	}
	return nil, syntax.Errorf(e.At(), "cannot evaluate %s", syntax.DescribeExpr(e))
}

// tensor converts v to a tensor: a tensor as it is, a Python number as a
// Weak scalar.
func (b *builder) tensor(v value, p syntax.SrcPos) (*spec.Node, error) {
	switch v := v.(type) {
	case *spec.Node:
		return v, nil
	case syntax.PyNum:
		return b.Scalar(v), nil
	case seqValue:
		// A list of numbers is an array, as NumPy's array_like; a
		// tuple of tensors (several results) is not.
		if n, err := b.arrayLiteral(p, v, -1, nil); err == nil {
			return n, nil
		}
		return nil, syntax.Errorf(p, "a %s is not a tensor: make arrays with the creation functions (zeros, arange, ...)", typeName(v))
	}
	return nil, syntax.Errorf(p, "a %s is not a tensor", typeName(v))
}

func (b *builder) unary(p syntax.SrcPos, op string, x value) (value, error) {
	if n, ok := x.(syntax.PyNum); ok {
		r, err := syntax.FoldUnary(op, n)
		if err != nil {
			return nil, syntax.ErrAt(p, err)
		}
		return r, nil
	}
	t, ok := x.(*spec.Node)
	if !ok {
		return nil, syntax.Errorf(p, "bad operand type for unary %s: '%s'", op, typeName(x))
	}
	switch op {
	case "-":
		return b.Node(p, tensor.OpNegative, spec.Attrs{}, t)
	case "~":
		return b.Node(p, tensor.OpInvert, spec.Attrs{}, t)
	}
	return t, nil // unary + changes nothing
}

// operatorOps maps the language's binary operators to ops.
var operatorOps = map[string]string{
	"+": tensor.OpAdd, "-": tensor.OpSubtract, "*": tensor.OpMultiply, "/": tensor.OpDivide, "//": tensor.OpFloorDiv,
	"%": tensor.OpMod, "**": tensor.OpPower, "==": tensor.OpEqual, "!=": tensor.OpNotEqual, "<": tensor.OpLess,
	"<=": tensor.OpLessEq, ">": tensor.OpGreater, ">=": tensor.OpGreaterEq, "&": tensor.OpBitAnd, "|": tensor.OpBitOr,
	"^": tensor.OpBitXor,
}

func (b *builder) binary(p syntax.SrcPos, op string, x, y value) (value, error) {
	xn, xnum := x.(syntax.PyNum)
	yn, ynum := y.(syntax.PyNum)
	if xnum && ynum {
		r, err := syntax.FoldBinary(op, xn, yn)
		if err != nil {
			return nil, syntax.ErrAt(p, err)
		}
		return r, nil
	}
	_, xt := x.(*spec.Node)
	_, yt := y.(*spec.Node)
	// A list beside a tensor is an array, as NumPy's ndarray takes it
	// (two lists, or a list and a number, are Python's list operators).
	if _, xs := x.(seqValue); xs && yt {
		if a, err := b.tensor(x, p); err == nil {
			x, xt = a, true
		}
	}
	if _, ys := y.(seqValue); ys && xt {
		if a, err := b.tensor(y, p); err == nil {
			y, yt = a, true
		}
	}
	if !(xt || xnum) || !(yt || ynum) {
		return nil, syntax.Errorf(p, "unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(x), typeName(y))
	}
	xv, _ := b.tensor(x, p)
	yv, _ := b.tensor(y, p)
	if op == "@" {
		if xnum || ynum {
			return nil, syntax.Errorf(p, "matmul: Input operand %d does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)", map[bool]int{true: 0, false: 1}[xnum])
		}
		return b.Matmul(p, xv, yv)
	}
	o, ok := operatorOps[op]
	if !ok {
		return nil, syntax.Errorf(p, "operator %s is not supported", op)
	}
	return b.Node(p, o, spec.Attrs{}, xv, yv)
}
