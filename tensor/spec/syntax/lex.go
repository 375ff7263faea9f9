package syntax

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The spec language's tokens follow Python's: names, numbers, strings,
// operators, and NEWLINE tokens that end statements. Newlines inside
// parentheses or brackets do not end a statement (Python's implicit line
// joining), nor does one after a backslash; ';' separates statements on a
// line.

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokNewline
	tokName
	tokInt
	tokFloat
	tokString
	tokOp
)

type token struct {
	kind tokKind
	text string // the token as written (the operator for tokOp)
	pos  SrcPos
	ival int64   // tokInt
	fval float64 // tokFloat
	sval string  // tokString: the decoded value
}

// describe names a token in an error message: "')'", "end of line".
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of spec"
	case tokNewline:
		if t.text == ";" {
			return "';'"
		}
		return "end of line"
	}
	return "'" + t.text + "'"
}

// operators, longest first so that the lexer matches greedily.
var operators = []string{
	"**=", "//=", "...", "<<", ">>",
	"**", "//", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "@=", "&=", "|=",
	"+", "-", "*", "/", "%", "@", "<", ">", "&", "|", "^", "~", "(", ")", "[", "]", "{", "}", ",", "=", ":", ".",
}

type lexer struct {
	src    string
	off    int // byte offset of the next rune
	line   int
	col    int // column of the next rune
	depth  int // open parentheses and brackets
	toks   []token
	lineOK bool // the current line has a token (a NEWLINE is due at its end)
	// stmtEnd is the offset just past the last newline that ended a
	// statement.
	stmtEnd int
}

// lex cuts src, which starts at line line of its text, into tokens. The
// last two tokens are always NEWLINE and EOF.
func lex(src string, line int) ([]token, error) {
	// Specs average a token every two or three bytes; sizing the slice up front
	// spares the copies of growing it.
	l := &lexer{src: src, line: line, col: 1, toks: make([]token, 0, len(src)/2+2)}
	if err := l.run(); err != nil {
		return nil, err
	}
	return l.toks, nil
}

// Complete returns the length of the longest prefix of src made of whole
// statements: it ends just after the newline that ends the last statement
// whose text is all there. A newline inside parentheses or brackets, or
// after a backslash, does not end a statement, and text the lexer cannot
// read (a string still open) ends the prefix before the statement that
// holds it. Blank and comment lines after the last statement are left out.
//
// A client writing a spec a piece at a time (as the kernel cuts a long
// write) uses it to tell a statement still to be completed from one that
// is wrong.
func Complete(src string) int {
	l := &lexer{src: src, line: 1, col: 1}
	l.run()
	return l.stmtEnd
}

// run lexes l.src into l.toks.
func (l *lexer) run() error {
	if l.line == 1 && strings.HasPrefix(l.src, "\ufeff") {
		l.off = len("\ufeff") // a byte order mark some editors write
	}
	for {
		if l.off >= len(l.src) {
			break
		}
		r, size := utf8.DecodeRuneInString(l.src[l.off:])
		p := SrcPos{l.line, l.col}
		switch {
		case r == '\n':
			l.advance(size)
			if l.depth == 0 && l.lineOK {
				l.toks = append(l.toks, token{kind: tokNewline, text: "\n", pos: p})
				l.lineOK = false
				l.stmtEnd = l.off
			}
		case r == ' ' || r == '\t' || r == '\r' || r == '\f':
			l.advance(size)
		case r == '#':
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.advance(1)
			}
		case r == '\\':
			l.advance(1)
			rest := l.src[l.off:]
			if strings.HasPrefix(rest, "\r\n") {
				l.advance(2)
			} else if strings.HasPrefix(rest, "\n") {
				l.advance(1)
			} else {
				return Errorf(p, "unexpected character after line continuation character")
			}
		case r == ';' && l.depth == 0:
			l.advance(1)
			if l.lineOK {
				l.toks = append(l.toks, token{kind: tokNewline, text: ";", pos: p})
				l.lineOK = false
			}
		case IsLetter(r):
			start := l.off
			for l.off < len(l.src) {
				c, n := utf8.DecodeRuneInString(l.src[l.off:])
				if !IsLetter(c) && !IsDigit(c) {
					break
				}
				l.advance(n)
			}
			l.emit(token{kind: tokName, text: l.src[start:l.off], pos: p})
		case IsDigit(r) || r == '.' && l.off+1 < len(l.src) && IsDigit(rune(l.src[l.off+1])):
			t, err := l.number(p)
			if err != nil {
				return err
			}
			l.emit(t)
		case r == '\'' || r == '"':
			t, err := l.str(p, byte(r))
			if err != nil {
				return err
			}
			l.emit(t)
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(l.src[l.off:], o) {
					op = o
					break
				}
			}
			if op == "" {
				if r == utf8.RuneError && size == 1 {
					return Errorf(p, "invalid UTF-8 in spec")
				}
				return Errorf(p, "unexpected character %q", r)
			}
			switch op {
			case "(", "[", "{":
				l.depth++
			case ")", "]", "}":
				if l.depth > 0 {
					l.depth--
				}
			}
			l.advance(len(op))
			l.emit(token{kind: tokOp, text: op, pos: p})
		}
	}
	end := SrcPos{l.line, l.col}
	if l.lineOK {
		l.toks = append(l.toks, token{kind: tokNewline, text: "\n", pos: end})
	}
	l.toks = append(l.toks, token{kind: tokEOF, pos: end})
	return nil
}

func (l *lexer) emit(t token) {
	l.toks = append(l.toks, t)
	l.lineOK = true
}

// advance moves past n bytes that hold whole runes.
func (l *lexer) advance(n int) {
	for _, r := range l.src[l.off : l.off+n] {
		if r == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
	}
	l.off += n
}

func IsLetter(r rune) bool { return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }
func IsDigit(r rune) bool  { return '0' <= r && r <= '9' }

// number scans an integer or floating-point literal in Python's syntax.
func (l *lexer) number(p SrcPos) (token, error) {
	start := l.off
	s := l.src
	isFloat := false
	if strings.HasPrefix(s[l.off:], "0x") || strings.HasPrefix(s[l.off:], "0X") ||
		strings.HasPrefix(s[l.off:], "0o") || strings.HasPrefix(s[l.off:], "0O") ||
		strings.HasPrefix(s[l.off:], "0b") || strings.HasPrefix(s[l.off:], "0B") {
		l.advance(2)
		for l.off < len(s) && (isHexDigit(rune(s[l.off])) || s[l.off] == '_') {
			l.advance(1)
		}
	} else {
		l.digits()
		if l.off < len(s) && s[l.off] == '.' {
			isFloat = true
			l.advance(1)
			l.digits()
		}
		if l.off < len(s) && (s[l.off] == 'e' || s[l.off] == 'E') {
			isFloat = true
			l.advance(1)
			if l.off < len(s) && (s[l.off] == '+' || s[l.off] == '-') {
				l.advance(1)
			}
			if l.off >= len(s) || !IsDigit(rune(s[l.off])) {
				return token{}, Errorf(p, "invalid float literal %q", s[start:l.off])
			}
			l.digits()
		}
	}
	text := s[start:l.off]
	if l.off < len(s) {
		if c := s[l.off]; c == 'j' || c == 'J' {
			return token{}, Errorf(p, "complex numbers are not supported")
		} else if IsLetter(rune(c)) || IsDigit(rune(c)) || c == '.' {
			return token{}, Errorf(p, "invalid number literal %q", s[start:l.off+1])
		}
	}
	if !underscoresOK(text) {
		return token{}, Errorf(p, "invalid number literal %q", text)
	}
	clean := strings.ReplaceAll(text, "_", "")
	if isFloat {
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil && !isRangeErr(err) {
			return token{}, Errorf(p, "invalid float literal %q", text)
		}
		// An overflowing literal is inf in Python too; ParseFloat returns ±Inf.
		return token{kind: tokFloat, text: text, pos: p, fval: f}, nil
	}
	if len(clean) > 1 && clean[0] == '0' && IsDigit(rune(clean[1])) {
		if strings.Trim(clean, "0") != "" {
			return token{}, Errorf(p, "leading zeros in decimal integer literals are not permitted")
		}
		clean = "0"
	}
	i, err := strconv.ParseInt(clean, 0, 64)
	if err != nil {
		if isRangeErr(err) {
			return token{}, Errorf(p, "integer literal %s is too large", text)
		}
		return token{}, Errorf(p, "invalid integer literal %q", text)
	}
	return token{kind: tokInt, text: text, pos: p, ival: i}, nil
}

func (l *lexer) digits() {
	for l.off < len(l.src) && (IsDigit(rune(l.src[l.off])) || l.src[l.off] == '_') {
		l.advance(1)
	}
}

func isHexDigit(r rune) bool {
	return IsDigit(r) || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F'
}

// underscoresOK reports whether every '_' in a number literal sits between
// two digits, as Python requires (after a base prefix it may follow it).
func underscoresOK(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '_' {
			continue
		}
		if i == 0 || i == len(s)-1 || !isHexDigit(rune(s[i+1])) {
			return false
		}
		if prev := s[i-1]; !isHexDigit(rune(prev)) && !(i == 2 && s[0] == '0') {
			return false
		}
	}
	return true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// str scans a string literal quoted with q, decoding the common escapes.
func (l *lexer) str(p SrcPos, q byte) (token, error) {
	start := l.off
	l.advance(1)
	var b strings.Builder
	for {
		if l.off >= len(l.src) || l.src[l.off] == '\n' {
			return token{}, Errorf(p, "unterminated string literal")
		}
		c := l.src[l.off]
		if c == q {
			l.advance(1)
			break
		}
		if c == '\\' && l.off+1 < len(l.src) && l.src[l.off+1] < utf8.RuneSelf {
			switch e := l.src[l.off+1]; e {
			case '\n': // a line continuation inside the string
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '\'', '"':
				b.WriteByte(e)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			l.advance(2)
			continue
		}
		_, n := utf8.DecodeRuneInString(l.src[l.off:])
		b.WriteString(l.src[l.off : l.off+n])
		l.advance(n)
	}
	return token{kind: tokString, text: l.src[start:l.off], pos: p, sval: b.String()}, nil
}
