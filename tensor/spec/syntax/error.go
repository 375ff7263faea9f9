package syntax

import (
	"errors"
	"fmt"
)

// A Error is the error of a bad spec. Line and Col (1-based) point at the
// offending token of the text form; they are 0 when there is no position, as
// for most errors of the JSON form, whose messages then name the node
// ("node 3: unknown op \"frob\"").
type Error struct {
	Line, Col int
	Msg       string
	Err       error // the cause Msg was made from, if any (Unwrap)
}

// Unwrap returns the cause of the error: a refusal by the filesystem
// (fs.ErrPermission) stays one through the parser.
func (e *Error) Unwrap() error { return e.Err }

// Error returns "LINE:COL: message", or the message alone when there is no
// position.
func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// SrcPos is a position in a spec's text: 1-based line and column (in runes).
type SrcPos struct {
	Line, Col int
}

// Errorf returns an *Error at p.
// A %w verb wraps its argument as fmt.Errorf does.
func Errorf(p SrcPos, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Line: p.Line, Col: p.Col, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// ErrAt turns err into an *Error at p, keeping the position of an err that
// already is one.
func ErrAt(p SrcPos, err error) *Error {
	if se, ok := err.(*Error); ok {
		return se
	}
	return &Error{Line: p.Line, Col: p.Col, Msg: err.Error(), Err: err}
}
