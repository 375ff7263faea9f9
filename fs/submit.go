package fs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/spec/syntax"
)

// submitFile is /sessions/<N>/submit. The writes of one open accumulate; the
// clunk submits the text as a graph.
//
// 9P's clunk cannot fail, so a bad spec is caught at the write where that
// is possible: every write checks the whole statements written so far (the
// whole document for the JSON form, once it is complete JSON), and one
// whose text is wrong there fails with EINVAL. Statements are built once:
// each write parses only those it completed, onto what the writes before
// built (lang.Prefix), so a long spec written in blocks costs one parse
// in all at the writes, and one more at the clunk. A statement still open at
// the end of a write (an unclosed bracket, a line not yet ended) may only
// mean that more is to come, so it waits for the clunk, which judges the
// whole text. Either way the message goes to the session's error file, and
// nothing from that open is submitted.
func (s *Server) submitFile(dir string, sess *engine.Session) *node {
	return &node{name: "submit", path: join(dir, "submit"), perm: 0222,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() == p9.ReadOnly {
				return nil, linux.EACCES
			}
			return &submitter{sess: sess, max: s.cfg.MaxSpec}, nil
		}}
}

type submitter struct {
	sess *engine.Session
	max  int

	mu     sync.Mutex
	text   []byte
	failed bool
	errno  linux.Errno // of the refusal, once failed
	// The statements checked so far: text[:done] is built into prefix,
	// and stmts says whether it holds any. A write before done starts
	// the check again.
	prefix *lang.Prefix
	done   int
	stmts  bool
}

func (h *submitter) ReadAt(p []byte, off int64) (int, error) { return 0, linux.EBADF }

func (h *submitter) WriteAt(p []byte, off int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed {
		return 0, h.errno
	}
	// Writes may come at any offset (a client may seek); the text is what
	// the file would hold.
	end := off + int64(len(p))
	if off < 0 || end > int64(h.max) {
		h.fail(fmt.Sprintf("spec longer than %d bytes", h.max))
		return 0, linux.EFBIG
	}
	if off < int64(h.done) {
		h.prefix, h.done, h.stmts = nil, 0, false
	}
	if end > int64(len(h.text)) {
		h.text = append(h.text, make([]byte, int(end)-len(h.text))...)
	}
	copy(h.text[off:], p)
	if err := h.check(endsWrite(p, end == int64(len(h.text)))); err != nil {
		h.fail(err.Error())
		h.errno = refusal(err, linux.EINVAL)
		return 0, h.errno
	}
	return len(p), nil
}

// endsWrite reports whether write p, which ends the text when last, looks
// like the whole of what its writer writes: it ends a line and is not a
// block that a larger write was cut into. cat and the kernel cut a long
// write into blocks of a multiple of 4096 bytes; echo, printf and a
// program's one write of a spec end a line at a length that is not. The
// text of such a write is judged whole: a statement left unfinished or a
// spec of only blanks and comments fails at the write, where the shell
// sees it (bash ignores the errors of closing a redirection).
func endsWrite(p []byte, last bool) bool {
	return last && len(p) > 0 && p[len(p)-1] == '\n' && len(p)%4096 != 0
}

// check parses what can be judged of the text so far; see submitFile.
// whole says that the text should be complete now (see endsWrite).
func (h *submitter) check(whole bool) error {
	if spec.IsJSON(h.text) {
		return h.checkJSON(whole)
	}
	if h.prefix == nil {
		h.prefix = h.sess.Prefix()
	}
	rest := string(h.text[h.done:])
	n := syntax.Complete(rest)
	if n > 0 {
		if err := h.prefix.Add(rest[:n]); err != nil {
			return err
		}
		h.done += n
		h.stmts = h.stmts || hasStatement(rest[:n])
	}
	if !whole {
		return nil
	}
	tail := rest[n:]
	if !h.stmts && !hasStatement(tail) {
		return errEmptySpec
	}
	if hasStatement(tail) {
		// A statement is left unfinished: the parser says where.
		if err := h.prefix.Add(tail); err != nil {
			return err
		}
		return errUnfinished
	}
	return nil
}

// checkJSON checks a spec in the JSON form once it is a whole JSON
// document, or when it should be (whole): the parser says what is wrong.
// A document ends with '}', so no other write is validated.
func (h *submitter) checkJSON(whole bool) error {
	t := bytes.TrimRight(h.text, " \t\r\n")
	if !whole && (len(t) == 0 || t[len(t)-1] != '}' || !json.Valid(h.text)) {
		return nil // incomplete, or wrong: the clunk tells
	}
	_, err := h.sess.Parse(string(h.text))
	return err
}

// hasStatement reports whether src has a line other than blanks and
// comments.
func hasStatement(src string) bool {
	for _, l := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return true
		}
	}
	return false
}

// fail records msg as the session's error and refuses the rest of the
// open. h.mu must be held.
func (h *submitter) fail(msg string) {
	h.failed = true
	h.errno = linux.EINVAL
	h.text = nil
	h.sess.SetError(msg)
}

// Close submits the text. Session.Submit records a refusal in the
// session's error file. A refusal of the spec is EINVAL, whether at a
// write or here (an error of another kind would reach the client as
// EIO), but that of a file refused to the session's owner, EACCES; a
// submit the server could not make durable (its journal's disk full or
// failing) fails with the system's errno, ENOSPC or EIO.
func (h *submitter) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed {
		return h.errno // refused at a write, which said why
	}
	if len(h.text) == 0 {
		return nil // opened and closed: nothing to submit
	}
	if !hasStatement(string(h.text)) {
		h.fail(errEmptySpec.Error())
		return linux.EINVAL
	}
	_, err := h.sess.Submit(string(h.text))
	h.text = nil
	if err != nil {
		return refusal(err, linux.EINVAL)
	}
	return nil
}

var (
	errEmptySpec  = errors.New("empty spec: only blank lines and comments")
	errUnfinished = errors.New("the last statement is not finished")
)

// panicError carries a recovered panic as an error.
type panicError struct{ v any }

func (e panicError) Error() string { return fmt.Sprintf("internal error: %v", e.v) }
