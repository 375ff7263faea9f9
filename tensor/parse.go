package tensor

import (
	"fmt"
	"strings"
)

// The parser turns tokens into statements of expression trees; build.go
// evaluates them into graph nodes. The grammar, in Python's terms:
//
//	spec      = { stmt (NEWLINE | ";") }
//	stmt      = NAME { "," NAME } "=" exprlist | NAME augop expr | "fetch" NAME { "," NAME }
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

// An expr is a node of an expression tree.
type expr interface {
	at() srcPos // the position errors about the expression point at
}

type (
	nameExpr struct {
		pos  srcPos
		name string
	}
	numExpr struct { // an int or float literal
		pos srcPos
		num pyNum
	}
	strExpr struct {
		pos srcPos
		s   string
	}
	constExpr struct { // True, False, None, ...
		pos srcPos
		tok string
	}
	seqExpr struct { // (a, b) or [a, b]
		pos   srcPos
		elts  []expr
		list  bool
		paren bool // a parenthesized tuple, not a bare a, b
	}
	unaryExpr struct {
		pos srcPos // the operator
		op  string
		x   expr
	}
	binaryExpr struct {
		pos  srcPos // the operator
		op   string
		x, y expr
	}
	callExpr struct {
		pos    srcPos // the opening parenthesis
		fn     expr
		args   []expr
		kwargs []kwarg
	}
	attrExpr struct {
		pos  srcPos // the attribute's name
		x    expr
		name string
	}
	indexExpr struct {
		pos srcPos // the opening bracket
		x   expr
		idx []expr // nameExpr, numExpr, sliceExpr, constExpr ("..." or None), ...
	}
	sliceExpr struct { // lo:hi:step, any of them nil
		pos          srcPos
		lo, hi, step expr
	}
)

type kwarg struct {
	pos  srcPos
	name string
	val  expr
}

func (e *nameExpr) at() srcPos   { return e.pos }
func (e *numExpr) at() srcPos    { return e.pos }
func (e *strExpr) at() srcPos    { return e.pos }
func (e *constExpr) at() srcPos  { return e.pos }
func (e *seqExpr) at() srcPos    { return e.pos }
func (e *unaryExpr) at() srcPos  { return e.pos }
func (e *binaryExpr) at() srcPos { return e.pos }
func (e *callExpr) at() srcPos   { return e.fn.at() }
func (e *attrExpr) at() srcPos   { return e.pos }
func (e *indexExpr) at() srcPos  { return e.pos }
func (e *sliceExpr) at() srcPos  { return e.pos }

// A stmt is one statement: an assignment (targets = value, or
// target op= value) or a fetch of names.
type stmt struct {
	pos     srcPos
	fetch   bool
	targets []nameExpr
	augOp   string // "+" for +=, ...
	augPos  srcPos // the augmented assignment's operator
	value   expr
}

type parser struct {
	toks  []token
	i     int
	depth int // nesting of expressions, bounded by maxDepth
}

// maxDepth bounds the nesting of expressions, so that no spec can exhaust
// the stack of the parser or of the evaluator.
const maxDepth = 200

// parseStmts parses a whole spec.
func parseStmts(src string) ([]stmt, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	var out []stmt
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
			return errorf(t.pos, "'%s' is not supported; use &, | or ~ (logical_and, logical_or, logical_not)", t.text)
		case "if", "else", "for", "in", "is", "lambda", "while", "def", "return", "import", "from", "del", "pass", "with", "as", "class", "global", "yield", "assert", "raise", "try", "except", "finally", "break", "continue", "nonlocal", "async", "await", "elif":
			return errorf(t.pos, "'%s' is not supported in specs", t.text)
		}
	}
	return errorf(t.pos, "unexpected %s", t.describe())
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

func (p *parser) stmt() (stmt, error) {
	first := p.peek()
	if first.kind == tokName && first.text == "fetch" {
		if nt := p.toks[p.i+1]; nt.kind == tokName {
			p.i++
			return p.fetch(first.pos)
		}
	}
	// Targets: NAME (, NAME)* followed by '=' or an augmented assignment.
	var targets []nameExpr
	for {
		t := p.peek()
		if t.kind != tokName || !isTargetEnd(p.toks[p.i+1]) {
			if len(targets) == 0 {
				if t.kind == tokName || t.kind == tokOp && t.text == "(" || t.kind == tokInt || t.kind == tokFloat {
					return stmt{}, p.bareExpr()
				}
			}
			return stmt{}, p.unexpected()
		}
		if err := checkTarget(t); err != nil {
			return stmt{}, err
		}
		p.i++
		targets = append(targets, nameExpr{t.pos, t.text})
		if p.isOp(",") {
			p.i++
			continue
		}
		break
	}
	s := stmt{pos: first.pos, targets: targets}
	op := p.next() // '=' or an augmented assignment, by isTargetEnd
	if op.text != "=" {
		if len(targets) > 1 {
			return stmt{}, errorf(op.pos, "illegal expression for augmented assignment")
		}
		s.augOp, s.augPos = augOps[op.text], op.pos
	}
	v, err := p.exprList()
	if err != nil {
		return stmt{}, err
	}
	s.value = v
	if p.isOp("=") {
		return stmt{}, errorf(p.peek().pos, "chained assignment is not supported")
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

var keywords = map[string]bool{
	"True": true, "False": true, "None": true, "and": true, "or": true, "not": true,
	"if": true, "else": true, "elif": true, "for": true, "in": true, "is": true,
	"lambda": true, "while": true, "def": true, "return": true, "import": true,
	"from": true, "del": true, "pass": true, "with": true, "as": true, "class": true,
	"global": true, "yield": true, "assert": true, "raise": true, "try": true,
	"except": true, "finally": true, "break": true, "continue": true,
	"nonlocal": true, "async": true, "await": true,
}

func checkTarget(t token) error {
	if keywords[t.text] {
		return errorf(t.pos, "cannot assign to %s", t.text)
	}
	return nil
}

// bareExpr parses an expression statement to report it well: a spec
// assigns every expression to a name.
func (p *parser) bareExpr() error {
	t := p.peek()
	if _, err := p.exprList(); err != nil {
		return err
	}
	if p.isOp("=") {
		return errorf(p.peek().pos, "cannot assign to expression")
	}
	if k := p.peek().kind; k != tokNewline && k != tokEOF {
		return p.unexpected()
	}
	return errorf(t.pos, "expression is not assigned to a name (write name = expression)")
}

func (p *parser) fetch(pos srcPos) (stmt, error) {
	s := stmt{pos: pos, fetch: true}
	for {
		t := p.next()
		if t.kind != tokName || keywords[t.text] {
			p.i--
			return stmt{}, p.unexpected()
		}
		s.targets = append(s.targets, nameExpr{t.pos, t.text})
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
func (p *parser) exprList() (expr, error) {
	pos := p.peek().pos
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return e, nil
	}
	elts := []expr{e}
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
	return &seqExpr{pos: pos, elts: elts}, nil
}

// startsExpr reports whether the next token can begin an expression.
func (p *parser) startsExpr() bool {
	t := p.peek()
	switch t.kind {
	case tokName:
		return !keywords[t.text] || t.text == "True" || t.text == "False" || t.text == "None"
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
func (p *parser) expr() (expr, error) {
	if p.depth++; p.depth > maxDepth {
		return nil, errorf(p.peek().pos, "expression nested too deeply")
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
		x = &binaryExpr{pos: t.pos, op: t.text, x: x, y: y}
		if t2 := p.peek(); t2.kind == tokOp && compareOps[t2.text] {
			return nil, errorf(t2.pos, "chained comparisons are not supported; use & between parenthesized comparisons")
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

func (p *parser) binary(level int) (expr, error) {
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
		x = &binaryExpr{pos: t.pos, op: t.text, x: x, y: y}
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
func (p *parser) unary() (expr, error) {
	t := p.peek()
	if t.kind == tokOp && (t.text == "-" || t.text == "+" || t.text == "~") {
		if p.depth++; p.depth > maxDepth {
			return nil, errorf(t.pos, "expression nested too deeply")
		}
		defer func() { p.depth-- }()
		p.i++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{pos: t.pos, op: t.text, x: x}, nil
	}
	return p.power()
}

// power parses primary ['**' unary]; ** is right-associative and its right
// operand may carry a sign (2**-1).
func (p *parser) power() (expr, error) {
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
		return &binaryExpr{pos: t.pos, op: "**", x: x, y: y}, nil
	}
	return x, nil
}

func (p *parser) primary() (expr, error) {
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
			c := &callExpr{pos: t.pos, fn: x}
			if err := p.callArgs(c, t); err != nil {
				return nil, err
			}
			x = c
		case "[":
			p.i++
			ix := &indexExpr{pos: t.pos, x: x}
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
			x = &attrExpr{pos: n.pos, x: x, name: n.text}
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
		return errorf(open.pos, "'%s' was never closed", open.text)
	}
	return p.unexpected()
}

func (p *parser) callArgs(c *callExpr, open token) error {
	for !p.isOp(")") {
		t := p.peek()
		if t.kind == tokName && p.toks[p.i+1].kind == tokOp && p.toks[p.i+1].text == "=" {
			if keywords[t.text] {
				return errorf(t.pos, "cannot assign to %s", t.text)
			}
			p.i += 2
			v, err := p.expr()
			if err != nil {
				return err
			}
			for _, kw := range c.kwargs {
				if kw.name == t.text {
					return errorf(t.pos, "keyword argument repeated: %s", t.text)
				}
			}
			c.kwargs = append(c.kwargs, kwarg{pos: t.pos, name: t.text, val: v})
		} else {
			if k := t.kind; k == tokNewline || k == tokEOF {
				return p.closing(open, ")")
			}
			if t.kind == tokOp && (t.text == "*" || t.text == "**") {
				return errorf(t.pos, "argument unpacking is not supported")
			}
			v, err := p.expr()
			if err != nil {
				return err
			}
			if len(c.kwargs) > 0 {
				return errorf(v.at(), "positional argument follows keyword argument")
			}
			c.args = append(c.args, v)
		}
		if !p.isOp(",") {
			break
		}
		p.i++
	}
	return p.closing(open, ")")
}

func (p *parser) subscripts(ix *indexExpr, open token) error {
	if p.isOp("]") {
		return errorf(p.peek().pos, "empty subscript")
	}
	for !p.isOp("]") {
		e, err := p.subscript()
		if err != nil {
			return err
		}
		ix.idx = append(ix.idx, e)
		if !p.isOp(",") {
			break
		}
		p.i++
	}
	return p.closing(open, "]")
}

// subscript parses one item of a subscript: an expression or a slice.
func (p *parser) subscript() (expr, error) {
	pos := p.peek().pos
	var lo expr
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
	s := &sliceExpr{pos: pos, lo: lo}
	if !p.isOp(":") && !p.isOp(",") && !p.isOp("]") {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		s.hi = e
	}
	if p.isOp(":") {
		p.i++
		if !p.isOp(",") && !p.isOp("]") {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			s.step = e
		}
	}
	return s, nil
}

func (p *parser) atom() (expr, error) {
	t := p.next()
	switch t.kind {
	case tokName:
		switch t.text {
		case "True", "False", "None":
			return &constExpr{pos: t.pos, tok: t.text}, nil
		}
		if keywords[t.text] {
			p.i--
			return nil, p.unexpected()
		}
		return &nameExpr{pos: t.pos, name: t.text}, nil
	case tokInt:
		return &numExpr{pos: t.pos, num: pyInt(t.ival)}, nil
	case tokFloat:
		return &numExpr{pos: t.pos, num: pyFloat(t.fval)}, nil
	case tokString:
		s := t.sval
		// Adjacent string literals concatenate, as in Python.
		for p.peek().kind == tokString {
			s += p.next().sval
		}
		return &strExpr{pos: t.pos, s: s}, nil
	case tokOp:
		switch t.text {
		case "...":
			return &constExpr{pos: t.pos, tok: "..."}, nil
		case "(", "[":
			return p.seq(t)
		}
	}
	p.i--
	if t.kind == tokEOF || t.kind == tokNewline {
		return nil, errorf(t.pos, "unexpected %s: expected an expression", t.describe())
	}
	return nil, p.unexpected()
}

// seq parses a parenthesized expression, a tuple or a list after its
// opening bracket.
func (p *parser) seq(open token) (expr, error) {
	list := open.text == "["
	close := ")"
	if list {
		close = "]"
	}
	s := &seqExpr{pos: open.pos, list: list, paren: true}
	comma := false
	for !p.isOp(close) {
		if k := p.peek().kind; k == tokNewline || k == tokEOF {
			return nil, p.closing(open, close)
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		s.elts = append(s.elts, e)
		if !p.isOp(",") {
			break
		}
		comma = true
		p.i++
	}
	if err := p.closing(open, close); err != nil {
		return nil, err
	}
	if !list && !comma && len(s.elts) == 1 {
		return s.elts[0], nil // (x) is x
	}
	return s, nil
}

// describeExpr renders an expression briefly for messages.
func describeExpr(e expr) string {
	switch e := e.(type) {
	case *nameExpr:
		return e.name
	case *attrExpr:
		return describeExpr(e.x) + "." + e.name
	case *callExpr:
		return describeExpr(e.fn) + "(...)"
	case *numExpr:
		return e.num.String()
	case *strExpr:
		return fmt.Sprintf("%q", e.s)
	case *constExpr:
		return e.tok
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", e), "*tensor.")
}
