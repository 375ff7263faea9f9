package tensor

import (
	"fmt"
	"slices"
	"strings"
)

// Parse parses a spec in the text form (SPEC.md "Specs") into a Graph. Names
// not assigned by the spec are looked up in env (may be nil) and become
// OpInput nodes. Every error it returns is a *SpecError naming the line and
// column of the offending token.
func Parse(src string, env Env) (*Graph, error) {
	stmts, err := parseStmts(src)
	if err != nil {
		return nil, err
	}
	b := newBuilder(env)
	var fetch []nameExpr
	var last *nameExpr
	for i, s := range stmts {
		if s.fetch {
			fetch = append(fetch, s.targets...)
			continue
		}
		if err := b.assign(s); err != nil {
			return nil, err
		}
		last = &stmts[i].targets[len(s.targets)-1]
	}
	if len(fetch) == 0 {
		if last == nil {
			return nil, errorf(srcPos{1, 1}, "the spec assigns nothing: write name = expression")
		}
		fetch = []nameExpr{*last}
	}
	var outs []Output
	seen := map[string]bool{}
	for _, f := range fetch {
		if seen[f.name] {
			return nil, errorf(f.pos, "%s is fetched twice", f.name)
		}
		seen[f.name] = true
		v, err := b.lookup(f.name, f.pos)
		if err != nil {
			return nil, err
		}
		n, err := b.tensor(v, f.pos)
		if err != nil {
			return nil, errorf(f.pos, "cannot fetch %s: %s", f.name, errAt(f.pos, err).Msg)
		}
		outs = append(outs, Output{Name: f.name, Node: n})
	}
	return b.graph(outs, src), nil
}

// ParseSpec parses either form: JSON if the first non-space byte is '{',
// else text.
func ParseSpec(src string, env Env) (*Graph, error) {
	if strings.HasPrefix(strings.TrimLeft(src, " \t\r\n"), "{") {
		return ParseJSON([]byte(src), env)
	}
	return Parse(src, env)
}

// A value is what a spec expression evaluates to: a tensor (*Node), a Python
// number (pyNum), a string, None, Ellipsis, a tuple or list (seqValue), a
// dtype (dtypeValue) or, inside subscripts, a slice (sliceValue).
type value any

type (
	noneValue     struct{}
	ellipsisValue struct{}
	dtypeValue    DType
	seqValue      struct {
		elts []value
		pos  []srcPos
		list bool
	}
	sliceValue struct {
		lo, hi, step value
	}
)

// typeName names a value's type in messages, in Python's words.
func typeName(v value) string {
	switch v := v.(type) {
	case *Node:
		return "tensor"
	case pyNum:
		return v.typeName()
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
	}
	return fmt.Sprintf("%T", v)
}

type builder struct {
	env    Env
	nodes  []*Node
	vars   map[string]value
	inputs map[string]*Node // OpInput nodes by session tensor name
}

func newBuilder(env Env) *builder {
	return &builder{env: env, vars: map[string]value{}, inputs: map[string]*Node{}}
}

// add infers n and appends it to the graph.
func (b *builder) add(n *Node) (*Node, error) {
	if err := infer(n); err != nil {
		return nil, err
	}
	n.ID = len(b.nodes)
	b.nodes = append(b.nodes, n)
	return n, nil
}

// addAt adds n, whose caller has set what its op needs given (see infer),
// reporting errors at p.
func (b *builder) addAt(p srcPos, n *Node) (*Node, error) {
	n, err := b.add(n)
	if err != nil {
		return nil, errAt(p, err)
	}
	return n, nil
}

// astype converts x to dt; a tensor of dtype dt is itself.
func (b *builder) astype(p srcPos, x *Node, dt DType) (*Node, error) {
	if x.DType == dt {
		return x, nil
	}
	return b.addAt(p, &Node{Op: OpAstype, Inputs: []*Node{x}, DType: dt})
}

// reshape gives x the shape; a tensor of that shape is itself.
func (b *builder) reshape(p srcPos, x *Node, shape []int) (*Node, error) {
	if slices.Equal(x.Shape, shape) {
		return x, nil
	}
	return b.addAt(p, &Node{Op: OpReshape, Inputs: []*Node{x}, Shape: cloneInts(shape)})
}

// transpose permutes x's axes; the identity permutation is x itself.
func (b *builder) transpose(p srcPos, x *Node, perm []int) (*Node, error) {
	identity := len(perm) == len(x.Shape)
	for i, ax := range perm {
		identity = identity && ax == i
	}
	if identity {
		return x, nil
	}
	return b.addAt(p, &Node{Op: OpTranspose, Inputs: []*Node{x}, Attrs: Attrs{Perm: cloneInts(perm)}})
}

// node makes a node whose shape and dtype follow from its inputs; errors are
// reported at p.
func (b *builder) node(p srcPos, op string, attrs Attrs, in ...*Node) (*Node, error) {
	n, err := b.add(&Node{Op: op, Inputs: in, Attrs: attrs})
	if err != nil {
		return nil, errAt(p, err)
	}
	return n, nil
}

// graph keeps the nodes the outputs need, renumbered in order.
func (b *builder) graph(outs []Output, src string) *Graph {
	need := make([]bool, len(b.nodes))
	for _, o := range outs {
		need[o.Node.ID] = true
	}
	for i := len(b.nodes) - 1; i >= 0; i-- {
		if need[i] {
			for _, in := range b.nodes[i].Inputs {
				need[in.ID] = true
			}
		}
	}
	g := &Graph{Outputs: outs, Source: src}
	for i, n := range b.nodes {
		if need[i] {
			n.ID = len(g.Nodes)
			g.Nodes = append(g.Nodes, n)
		}
	}
	return g
}

func (b *builder) assign(s stmt) error {
	v, err := b.eval(s.value)
	if err != nil {
		return err
	}
	if s.augOp != "" {
		t := s.targets[0]
		old, err := b.lookup(t.name, t.pos)
		if err != nil {
			return err
		}
		if v, err = b.binary(s.augPos, s.augOp, old, v); err != nil {
			return err
		}
	}
	if len(s.targets) == 1 {
		b.vars[s.targets[0].name] = v
		return nil
	}
	seq, ok := v.(seqValue)
	if !ok {
		return errorf(s.pos, "cannot unpack a %s into %d names", typeName(v), len(s.targets))
	}
	if len(seq.elts) != len(s.targets) {
		return errorf(s.pos, "cannot unpack %d values into %d names", len(seq.elts), len(s.targets))
	}
	for i, t := range s.targets {
		b.vars[t.name] = seq.elts[i]
	}
	return nil
}

// constants are the names a spec can use without assigning them.
var constants = map[string]value{
	"inf": pyFloat(posInf), "Inf": pyFloat(posInf), "infty": pyFloat(posInf),
	"nan": pyFloat(nanValue), "NaN": pyFloat(nanValue), "NAN": pyFloat(nanValue),
	"pi": pyFloat(3.141592653589793), "e": pyFloat(2.718281828459045),
	"newaxis": noneValue{},
	"float32": dtypeValue(Float32), "float64": dtypeValue(Float64),
	"int32": dtypeValue(Int32), "int64": dtypeValue(Int64),
	"bool": dtypeValue(Bool), "bool_": dtypeValue(Bool),
	"float": dtypeValue(Float64), "float_": dtypeValue(Float64), "double": dtypeValue(Float64),
	"int": dtypeValue(Int64), "int_": dtypeValue(Int64),
}

// lookup resolves a name: the spec's own names first, then the session's
// tensors, then constants.
func (b *builder) lookup(name string, p srcPos) (value, error) {
	if v, ok := b.vars[name]; ok {
		return v, nil
	}
	if n, ok := b.inputs[name]; ok {
		return n, nil
	}
	if b.env != nil {
		if tt, ok := b.env.Lookup(name); ok && tt != nil {
			n := &Node{Op: OpInput, Shape: cloneInts(tt.Shape), DType: tt.DType, Chunks: cloneChunks(tt.Chunks), Attrs: Attrs{Name: name}}
			if _, err := b.add(n); err != nil {
				return nil, errorf(p, "session tensor %s: %v", name, err)
			}
			b.inputs[name] = n
			return n, nil
		}
	}
	if v, ok := constants[name]; ok {
		return v, nil
	}
	if _, ok := functions[name]; ok {
		return nil, errorf(p, "%s is a function: call it, %s(...)", name, name)
	}
	return nil, errorf(p, "unknown name %s", name)
}

func cloneInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return append([]int{}, s...)
}

func cloneChunks(c [][]int) [][]int {
	out := make([][]int, len(c))
	for i, cs := range c {
		out[i] = append([]int{}, cs...)
	}
	return out
}

func (b *builder) eval(e expr) (value, error) {
	switch e := e.(type) {
	case *nameExpr:
		return b.lookup(e.name, e.pos)
	case *numExpr:
		return e.num, nil
	case *strExpr:
		return e.s, nil
	case *constExpr:
		switch e.tok {
		case "True":
			return pyBool(true), nil
		case "False":
			return pyBool(false), nil
		case "None":
			return noneValue{}, nil
		}
		return ellipsisValue{}, nil
	case *seqExpr:
		s := seqValue{list: e.list}
		for _, x := range e.elts {
			v, err := b.eval(x)
			if err != nil {
				return nil, err
			}
			s.elts = append(s.elts, v)
			s.pos = append(s.pos, x.at())
		}
		return s, nil
	case *unaryExpr:
		x, err := b.eval(e.x)
		if err != nil {
			return nil, err
		}
		return b.unary(e.pos, e.op, x)
	case *binaryExpr:
		x, err := b.eval(e.x)
		if err != nil {
			return nil, err
		}
		y, err := b.eval(e.y)
		if err != nil {
			return nil, err
		}
		return b.binary(e.pos, e.op, x, y)
	case *callExpr:
		return b.call(e)
	case *attrExpr:
		return b.attr(e)
	case *indexExpr:
		return b.index(e)
	case *sliceExpr:
		return nil, errorf(e.pos, "a slice is only allowed inside [ ]")
	}
	return nil, errorf(e.at(), "cannot evaluate %s", describeExpr(e))
}

// scalar makes the Weak OpScalar node of a Python number.
func (b *builder) scalar(v pyNum) *Node {
	n := &Node{Op: OpScalar, Shape: []int{}, DType: v.dt, Chunks: [][]int{}, Weak: true}
	if v.isFloat() {
		n.Attrs.Value = v.f
	} else {
		n.Attrs.IntValue = v.i
	}
	n, _ = b.add(n) // a scalar node is always valid
	return n
}

// tensor converts v to a tensor: a tensor as it is, a Python number as a
// Weak scalar.
func (b *builder) tensor(v value, p srcPos) (*Node, error) {
	switch v := v.(type) {
	case *Node:
		return v, nil
	case pyNum:
		return b.scalar(v), nil
	case seqValue:
		return nil, errorf(p, "a %s is not a tensor: make arrays with the creation functions (zeros, arange, ...)", typeName(v))
	}
	return nil, errorf(p, "a %s is not a tensor", typeName(v))
}

func (b *builder) unary(p srcPos, op string, x value) (value, error) {
	if n, ok := x.(pyNum); ok {
		r, err := foldUnary(op, n)
		if err != nil {
			return nil, errAt(p, err)
		}
		return r, nil
	}
	t, ok := x.(*Node)
	if !ok {
		return nil, errorf(p, "bad operand type for unary %s: '%s'", op, typeName(x))
	}
	switch op {
	case "-":
		return b.node(p, OpNegative, Attrs{}, t)
	case "~":
		return b.node(p, OpInvert, Attrs{}, t)
	}
	return t, nil // unary + changes nothing
}

// operatorOps maps the language's binary operators to ops.
var operatorOps = map[string]string{
	"+": OpAdd, "-": OpSubtract, "*": OpMultiply, "/": OpDivide, "//": OpFloorDiv,
	"%": OpMod, "**": OpPower, "==": OpEqual, "!=": OpNotEqual, "<": OpLess,
	"<=": OpLessEq, ">": OpGreater, ">=": OpGreaterEq, "&": OpBitAnd, "|": OpBitOr,
}

func (b *builder) binary(p srcPos, op string, x, y value) (value, error) {
	xn, xnum := x.(pyNum)
	yn, ynum := y.(pyNum)
	if xnum && ynum {
		r, err := foldBinary(op, xn, yn)
		if err != nil {
			return nil, errAt(p, err)
		}
		return r, nil
	}
	_, xt := x.(*Node)
	_, yt := y.(*Node)
	if !(xt || xnum) || !(yt || ynum) {
		return nil, errorf(p, "unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(x), typeName(y))
	}
	xv, _ := b.tensor(x, p)
	yv, _ := b.tensor(y, p)
	if op == "@" {
		if xnum || ynum {
			return nil, errorf(p, "matmul: Input operand %d does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)", map[bool]int{true: 0, false: 1}[xnum])
		}
		return b.matmul(p, xv, yv)
	}
	o, ok := operatorOps[op]
	if !ok {
		return nil, errorf(p, "operator %s is not supported", op)
	}
	return b.node(p, o, Attrs{}, xv, yv)
}
