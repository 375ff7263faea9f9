package lang

import (
	"io/fs"
	"marsfs/tensor/spec"
	"strings"

	"marsfs/tensor/spec/syntax"
)

// A Prefix builds a spec in the text form as it is written, a piece of
// whole statements at a time (fs's submit file checks each write so):
// each piece is parsed and built once, onto what the pieces before it
// built, so that checking a long spec written in blocks costs one parse
// of it in all rather than one a block. It finds the errors that parsing
// the whole text finds in those statements, at the same lines and
// columns, and names fetched twice or not assigned before the piece that
// fetches them ends. What depends on the whole text (which names it
// outputs, whether it assigns anything) waits for the whole, which Parse
// builds.
type Prefix struct {
	b       *builder
	line    int             // the line the next piece starts at
	fetched map[string]bool // the names fetched so far
}

// NewPrefix starts a spec against the session's tensors env (may be nil)
// and the data directory data (may be nil), as ParseData would read it.
func NewPrefix(env spec.Env, data fs.FS) *Prefix { return NewPrefixWith(env, Options{Data: data}) }

// NewPrefixWith is NewPrefix under opt.
func NewPrefixWith(env spec.Env, opt Options) *Prefix {
	b := newBuilder(env)
	b.data = opt.Data
	b.maxChunks = opt.maxChunks()
	return &Prefix{b: b, line: 1, fetched: map[string]bool{}}
}

// Add builds piece, the text that follows what was added before: whole
// statements (syntax.Complete), blank lines and comments. An error is a
// *syntax.Error at its place in the whole text; after one, p is not to be
// added to.
func (p *Prefix) Add(piece string) error {
	stmts, err := syntax.ParseStmtsAt(piece, p.line)
	if err != nil {
		return err
	}
	p.line += strings.Count(piece, "\n")
	st, err := p.b.statements(stmts)
	if err != nil {
		return err
	}
	_, err = p.b.outputs(st.fetch, p.fetched)
	return err
}
