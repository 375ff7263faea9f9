package syntax

import (
	"fmt"
	"strings"
)

// The parser turns tokens into statements of expression trees; lang's build.go
// evaluates them into graph nodes. The grammar, in Python's terms:
//
//	spec      = { stmt (NEWLINE | ";") }
//	stmt      = NAME { "," NAME } "=" exprlist | NAME augop expr | "fetch" [ NAME { "," NAME } ] | "del" NAME { "," NAME }
//	exprlist  = expr { "," expr } [","]
//	expr      = bitor [ compare bitor ]
//	unary     = ("-" | "+" | "~") unary | power
//	power     = primary [ "**" unary ]
//	primary   = atom { "(" args ")" | "[" subscripts "]" | "." NAME }
//	atom      = NAME | NUMBER | STRING | True | False | None | "..." | "(" ... ")" | "[" ... "]"
//	subscript = expr | [expr] ":" [expr] [":" [expr]]
// Operator precedence is Python's, lowest
// first: comparisons, |, ^, &, shifts, + -, * / // % @, unary + - ~, **, then
// calls, subscripts and attributes. (^, << and >> parse, to give a clear
// error, but marsfs has no op for them.)

// An Expr is a node of an expression tree.
type Expr interface {
	At() SrcPos // the position errors about the expression point at
}

type (
	NameExpr struct {
		Pos  SrcPos
		Name string
	}
	NumExpr struct { // an int or float literal
		pos SrcPos
		Num PyNum
	}
	StrExpr struct {
		pos SrcPos
		S   string
	}
	ConstExpr struct { // True, False, None, ...
		pos SrcPos
		Tok string
	}
	SeqExpr struct { // (a, b) or [a, b]
		pos   SrcPos
		Elts  []Expr
		List  bool
		paren bool // a parenthesized tuple, not a bare a, b
	}
	UnaryExpr struct {
		Pos SrcPos // the operator
		Op  string
		X   Expr
	}
	BinaryExpr struct {
		Pos  SrcPos // the operator
		Op   string
		X, Y Expr
	}
	CallExpr struct {
		Pos    SrcPos // the opening parenthesis
		Fn     Expr
		Args   []Expr
		Kwargs []kwarg
	}
	AttrExpr struct {
		Pos  SrcPos // the attribute's name
		X    Expr
		Name string
	}
	IndexExpr struct {
		Pos SrcPos // the opening bracket
		X   Expr
		Idx []Expr // nameExpr, numExpr, sliceExpr, constExpr ("..." or None), ...
	}
	DictExpr struct { // {k: v, ...}, as attributes are given
		pos  SrcPos
		Keys []Expr
		Vals []Expr
	}
	SliceExpr struct { // lo:hi:step, any of them nil
		Pos          SrcPos
		Lo, Hi, Step Expr
	}
)

type kwarg struct {
	Pos  SrcPos
	Name string
	Val  Expr
}

func (e *NameExpr) At() SrcPos   { return e.Pos }
func (e *NumExpr) At() SrcPos    { return e.pos }
func (e *StrExpr) At() SrcPos    { return e.pos }
func (e *ConstExpr) At() SrcPos  { return e.pos }
func (e *SeqExpr) At() SrcPos    { return e.pos }
func (e *UnaryExpr) At() SrcPos  { return e.Pos }
func (e *BinaryExpr) At() SrcPos { return e.Pos }
func (e *CallExpr) At() SrcPos   { return e.Fn.At() }
func (e *AttrExpr) At() SrcPos   { return e.Pos }
func (e *IndexExpr) At() SrcPos  { return e.Pos }
func (e *SliceExpr) At() SrcPos  { return e.Pos }
func (e *DictExpr) At() SrcPos   { return e.pos }

// A Stmt is one statement: an assignment (targets = value, or
// target op= value), a fetch of names (none for a bare fetch), or a del
// of names.
type Stmt struct {
	Pos     SrcPos
	Fetch   bool
	Del     bool
	Targets []NameExpr
	AugOp   string // "+" for +=, ...
	AugPos  SrcPos // the augmented assignment's operator
	Value   Expr
	// Expr marks an expression statement (no targets): the builder
	// accepts those whose value is a statement of its own (to_npy).
	Expr bool
}

type parser struct {
	toks  []token
	i     int
	depth int // nesting of expressions, bounded by maxDepth
}

// maxDepth bounds the nesting of expressions, so that no spec can exhaust
// the stack of the parser or of the evaluator.
const maxDepth = 200

// ParseStmts parses a whole spec.
func ParseStmts(src string) ([]Stmt, error) { return ParseStmtsAt(src, 1) }

// ParseStmtsAt parses whole statements (see Complete) that start at the
// beginning of line line of a longer text, such as the statements a writer
// of a spec added since the last ones parsed: positions, in the statements
// and in errors, are the whole text's.
func ParseStmtsAt(src string, line int) ([]Stmt, error) {
	toks, err := lex(src, line)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	var out []Stmt
	for p.peek().kind != tokEOF {
		if p.peek().kind == tokNewline {
			p.i++
			continue
		}
		s, err := p.stmt()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tokOp && t.text == s
}

// unexpected reports the token at hand, with advice for Python keywords
// the language does not have.
func (p *parser) unexpected() error {
	t := p.peek()
	if t.kind == tokName {
		switch t.text {
		case "and", "or", "not":
			return Errorf(t.pos, "'%s' is not supported; use &, | or ~ (logical_and, logical_or, logical_not)", t.text)
		case "if", "else", "for", "in", "is", "lambda", "while", "def", "return", "import", "from", "del", "pass", "with", "as", "class", "global", "yield", "assert", "raise", "try", "except", "finally", "break", "continue", "nonlocal", "async", "await", "elif":
			return Errorf(t.pos, "'%s' is not supported in specs", t.text)
		}
	}
	return Errorf(t.pos, "unexpected %s", t.describe())
}

func (p *parser) endOfStmt() error {
	switch p.peek().kind {
	case tokNewline:
		p.i++
		return nil
	case tokEOF:
		return nil
	}
	return p.unexpected()
}

var augOps = map[string]string{
	"+=": "+", "-=": "-", "*=": "*", "/=": "/", "//=": "//", "%=": "%",
	"**=": "**", "@=": "@", "&=": "&", "|=": "|",
}

func (p *parser) stmt() (Stmt, error) {
	first := p.peek()
	if first.kind == tokName && first.text == "fetch" {
		switch nt := p.toks[p.i+1]; nt.kind {
		case tokName:
			p.i++
			return p.fetch(first.pos)
		case tokNewline, tokEOF:
			// fetch alone: the spec keeps nothing new.
			p.i++
			return Stmt{Pos: first.pos, Fetch: true}, p.endOfStmt()
		}
	}
	if first.kind == tokName && first.text == "del" {
		if nt := p.toks[p.i+1]; nt.kind == tokName && !Keywords[nt.text] {
			p.i++
			s, err := p.fetch(first.pos) // the same list of names
			s.Fetch, s.Del = false, true
			return s, err
		}
	}
	// Targets: NAME (, NAME)* followed by '=' or an augmented assignment.
	var targets []NameExpr
	for {
		t := p.peek()
		if t.kind != tokName || !isTargetEnd(p.toks[p.i+1]) {
			if len(targets) == 0 {
				if t.kind == tokName || t.kind == tokOp && t.text == "(" || t.kind == tokInt || t.kind == tokFloat {
					return p.bareExpr()
				}
			}
			return Stmt{}, p.unexpected()
		}
		if err := checkTarget(t); err != nil {
			return Stmt{}, err
		}
		p.i++
		targets = append(targets, NameExpr{t.pos, t.text})
		if p.isOp(",") {
			p.i++
			continue
		}
		break
	}
	s := Stmt{Pos: first.pos, Targets: targets}
	op := p.next() // '=' or an augmented assignment, by isTargetEnd
	if op.text != "=" {
		if len(targets) > 1 {
			return Stmt{}, Errorf(op.pos, "illegal expression for augmented assignment")
		}
		s.AugOp, s.AugPos = augOps[op.text], op.pos
	}
	v, err := p.exprList()
	if err != nil {
		return Stmt{}, err
	}
	s.Value = v
	if p.isOp("=") {
		return Stmt{}, Errorf(p.peek().pos, "chained assignment is not supported")
	}
	return s, p.endOfStmt()
}

// isTargetEnd reports whether t may follow an assignment target.
func isTargetEnd(t token) bool {
	if t.kind != tokOp {
		return false
	}
	_, aug := augOps[t.text]
	return t.text == "=" || t.text == "," || aug
}

var Keywords = map[string]bool{
	"True": true, "False": true, "None": true, "and": true, "or": true, "not": true,
	"if": true, "else": true, "elif": true, "for": true, "in": true, "is": true,
	"lambda": true, "while": true, "def": true, "return": true, "import": true,
	"from": true, "del": true, "pass": true, "with": true, "as": true, "class": true,
	"global": true, "yield": true, "assert": true, "raise": true, "try": true,
	"except": true, "finally": true, "break": true, "continue": true,
	"nonlocal": true, "async": true, "await": true,
}

func checkTarget(t token) error {
	if Keywords[t.text] {
		return Errorf(t.pos, "cannot assign to %s", t.text)
	}
	return nil
}

// bareExpr parses an expression statement to report it well: a spec
// assigns every expression to a name.
// bareExpr parses an expression statement; only a statement function
// (to_npy, ...) makes one valid, which the builder judges.
func (p *parser) bareExpr() (Stmt, error) {
	t := p.peek()
	v, err := p.exprList()
	if err != nil {
		return Stmt{}, err
	}
	if p.isOp("=") {
		return Stmt{}, Errorf(p.peek().pos, "cannot assign to expression")
	}
	return Stmt{Pos: t.pos, Value: v, Expr: true}, p.endOfStmt()
}

func (p *parser) fetch(pos SrcPos) (Stmt, error) {
	s := Stmt{Pos: pos, Fetch: true}
	for {
		t := p.next()
		if t.kind != tokName || Keywords[t.text] {
			p.i--
			return Stmt{}, p.unexpected()
		}
		s.Targets = append(s.Targets, NameExpr{t.pos, t.text})
		if !p.isOp(",") {
			break
		}
		p.i++
		if k := p.peek().kind; k == tokNewline || k == tokEOF {
			break // a trailing comma
		}
	}
	return s, p.endOfStmt()
}

// exprList parses expr (, expr)* [,]: a bare tuple when there are commas.
func (p *parser) exprList() (Expr, error) {
	pos := p.peek().pos
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return e, nil
	}
	elts := []Expr{e}
	for p.isOp(",") {
		p.i++
		if !p.startsExpr() {
			break
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		elts = append(elts, e)
	}
	return &SeqExpr{pos: pos, Elts: elts}, nil
}

// startsExpr reports whether the next token can begin an expression.
func (p *parser) startsExpr() bool {
	t := p.peek()
	switch t.kind {
	case tokName:
		return !Keywords[t.text] || t.text == "True" || t.text == "False" || t.text == "None"
	case tokInt, tokFloat, tokString:
		return true
	case tokOp:
		switch t.text {
		case "(", "[", "-", "+", "~", "...":
			return true
		}
	}
	return false
}

var compareOps = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

// expr parses a comparison, the loosest binding expression of the language.
func (p *parser) expr() (Expr, error) {
	if p.depth++; p.depth > maxDepth {
		return nil, Errorf(p.peek().pos, "expression nested too deeply")
	}
	defer func() { p.depth-- }()
	x, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind == tokOp && compareOps[t.text] {
		p.i++
		y, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		x = &BinaryExpr{Pos: t.pos, Op: t.text, X: x, Y: y}
		if t2 := p.peek(); t2.kind == tokOp && compareOps[t2.text] {
			return nil, Errorf(t2.pos, "chained comparisons are not supported; use & between parenthesized comparisons")
		}
	}
	return x, nil
}

// binaryLevels lists the left-associative binary operators, loosest first.
var binaryLevels = [][]string{
	{"|"},
	{"^"},
	{"&"},
	{"<<", ">>"},
	{"+", "-"},
	{"*", "/", "//", "%", "@"},
}

func (p *parser) binary(level int) (Expr, error) {
	if level == len(binaryLevels) {
		return p.unary()
	}
	x, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tokOp || !contains(binaryLevels[level], t.text) {
			return x, nil
		}
		p.i++
		y, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		x = &BinaryExpr{Pos: t.pos, Op: t.text, X: x, Y: y}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// unary parses the unary operators, which bind looser than ** on their
// right: -2**2 is -(2**2).
func (p *parser) unary() (Expr, error) {
	t := p.peek()
	if t.kind == tokOp && (t.text == "-" || t.text == "+" || t.text == "~") {
		if p.depth++; p.depth > maxDepth {
			return nil, Errorf(t.pos, "expression nested too deeply")
		}
		defer func() { p.depth-- }()
		p.i++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &UnaryExpr{Pos: t.pos, Op: t.text, X: x}, nil
	}
	return p.power()
}

// power parses primary ['**' unary]; ** is right-associative and its right
// operand may carry a sign (2**-1).
func (p *parser) power() (Expr, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tokOp && t.text == "**" {
		p.i++
		y, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &BinaryExpr{Pos: t.pos, Op: "**", X: x, Y: y}, nil
	}
	return x, nil
}

func (p *parser) primary() (Expr, error) {
	x, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tokOp {
			return x, nil
		}
		switch t.text {
		case "(":
			p.i++
			c := &CallExpr{Pos: t.pos, Fn: x}
			if err := p.callArgs(c, t); err != nil {
				return nil, err
			}
			x = c
		case "[":
			p.i++
			ix := &IndexExpr{Pos: t.pos, X: x}
			if err := p.subscripts(ix, t); err != nil {
				return nil, err
			}
			x = ix
		case ".":
			p.i++
			n := p.next()
			if n.kind != tokName {
				p.i--
				return nil, p.unexpected()
			}
			x = &AttrExpr{Pos: n.pos, X: x, Name: n.text}
		default:
			return x, nil
		}
	}
}

// closing consumes the bracket that closes open, or reports it unclosed.
func (p *parser) closing(open token, close string) error {
	t := p.peek()
	if t.kind == tokOp && t.text == close {
		p.i++
		return nil
	}
	if t.kind == tokNewline || t.kind == tokEOF {
		return Errorf(open.pos, "'%s' was never closed", open.text)
	}
	return p.unexpected()
}

func (p *parser) callArgs(c *CallExpr, open token) error {
	for !p.isOp(")") {
		t := p.peek()
		if t.kind == tokName && p.toks[p.i+1].kind == tokOp && p.toks[p.i+1].text == "=" {
			if Keywords[t.text] {
				return Errorf(t.pos, "cannot assign to %s", t.text)
			}
			p.i += 2
			v, err := p.expr()
			if err != nil {
				return err
			}
			for _, kw := range c.Kwargs {
				if kw.Name == t.text {
					return Errorf(t.pos, "keyword argument repeated: %s", t.text)
				}
			}
			c.Kwargs = append(c.Kwargs, kwarg{Pos: t.pos, Name: t.text, Val: v})
		} else {
			if k := t.kind; k == tokNewline || k == tokEOF {
				return p.closing(open, ")")
			}
			if t.kind == tokOp && (t.text == "*" || t.text == "**") {
				return Errorf(t.pos, "argument unpacking is not supported")
			}
			v, err := p.expr()
			if err != nil {
				return err
			}
			if len(c.Kwargs) > 0 {
				return Errorf(v.At(), "positional argument follows keyword argument")
			}
			c.Args = append(c.Args, v)
		}
		if !p.isOp(",") {
			break
		}
		p.i++
	}
	return p.closing(open, ")")
}

func (p *parser) subscripts(ix *IndexExpr, open token) error {
	if p.isOp("]") {
		return Errorf(p.peek().pos, "empty subscript")
	}
	for !p.isOp("]") {
		e, err := p.subscript()
		if err != nil {
			return err
		}
		ix.Idx = append(ix.Idx, e)
		if !p.isOp(",") {
			break
		}
		p.i++
	}
	return p.closing(open, "]")
}

// subscript parses one item of a subscript: an expression or a slice.
func (p *parser) subscript() (Expr, error) {
	pos := p.peek().pos
	var lo Expr
	if !p.isOp(":") {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.isOp(":") {
			return e, nil
		}
		lo = e
	}
	p.i++ // ':'
	s := &SliceExpr{Pos: pos, Lo: lo}
	if !p.isOp(":") && !p.isOp(",") && !p.isOp("]") {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		s.Hi = e
	}
	if p.isOp(":") {
		p.i++
		if !p.isOp(",") && !p.isOp("]") {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			s.Step = e
		}
	}
	return s, nil
}

func (p *parser) atom() (Expr, error) {
	t := p.next()
	switch t.kind {
	case tokName:
		switch t.text {
		case "True", "False", "None":
			return &ConstExpr{pos: t.pos, Tok: t.text}, nil
		}
		if Keywords[t.text] {
			p.i--
			return nil, p.unexpected()
		}
		return &NameExpr{Pos: t.pos, Name: t.text}, nil
	case tokInt:
		return &NumExpr{pos: t.pos, Num: PyInt(t.ival)}, nil
	case tokFloat:
		return &NumExpr{pos: t.pos, Num: PyFloat(t.fval)}, nil
	case tokString:
		s := t.sval
		// Adjacent string literals concatenate, as in Python.
		for p.peek().kind == tokString {
			s += p.next().sval
		}
		return &StrExpr{pos: t.pos, S: s}, nil
	case tokOp:
		switch t.text {
		case "...":
			return &ConstExpr{pos: t.pos, Tok: "..."}, nil
		case "(", "[":
			return p.seq(t)
		case "{":
			return p.dict(t)
		}
	}
	p.i--
	if t.kind == tokEOF || t.kind == tokNewline {
		return nil, Errorf(t.pos, "unexpected %s: expected an expression", t.describe())
	}
	return nil, p.unexpected()
}

// seq parses a parenthesized expression, a tuple or a list after its
// opening bracket.
func (p *parser) seq(open token) (Expr, error) {
	list := open.text == "["
	close := ")"
	if list {
		close = "]"
	}
	s := &SeqExpr{pos: open.pos, List: list, paren: true}
	comma := false
	for !p.isOp(close) {
		if k := p.peek().kind; k == tokNewline || k == tokEOF {
			return nil, p.closing(open, close)
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		s.Elts = append(s.Elts, e)
		if !p.isOp(",") {
			break
		}
		comma = true
		p.i++
	}
	if err := p.closing(open, close); err != nil {
		return nil, err
	}
	if !list && !comma && len(s.Elts) == 1 {
		return s.Elts[0], nil // (x) is x
	}
	return s, nil
}

// dict parses a dict display after its opening brace: key: value pairs,
// separated by commas, a trailing comma allowed.
func (p *parser) dict(open token) (Expr, error) {
	d := &DictExpr{pos: open.pos}
	for !p.isOp("}") {
		if k := p.peek().kind; k == tokNewline || k == tokEOF {
			return nil, p.closing(open, "}")
		}
		k, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.isOp(":") {
			return nil, p.unexpected()
		}
		p.i++
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		d.Keys, d.Vals = append(d.Keys, k), append(d.Vals, v)
		if !p.isOp(",") {
			break
		}
		p.i++
	}
	if err := p.closing(open, "}"); err != nil {
		return nil, err
	}
	return d, nil
}

// DescribeExpr renders an expression briefly for messages.
func DescribeExpr(e Expr) string {
	switch e := e.(type) {
	case *NameExpr:
		return e.Name
	case *AttrExpr:
		return DescribeExpr(e.X) + "." + e.Name
	case *CallExpr:
		return DescribeExpr(e.Fn) + "(...)"
	case *NumExpr:
		return e.Num.String()
	case *StrExpr:
		return fmt.Sprintf("%q", e.S)
	case *ConstExpr:
		return e.Tok
	case *DictExpr:
		return "{...}"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", e), "*tensor.")
}
