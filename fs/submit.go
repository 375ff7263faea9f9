package fs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/tensor/spec/syntax"
)

// submitFile is /sessions/<N>/submit. The writes of one open accumulate; the
// clunk submits the text as a graph.
//
// 9P's clunk cannot fail, so a bad spec is caught at the write where that
// is possible: every write checks the whole statements written so far (the
// whole document for the JSON form, once it is complete JSON), and one
// whose text is wrong there fails with EINVAL. A statement still open at
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
	text := string(h.text)
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		if !json.Valid(h.text) {
			if whole {
				_, err := h.sess.Parse(text) // says what is wrong
				return err
			}
			return nil // incomplete, or wrong: the clunk tells
		}
		_, err := h.sess.Parse(text)
		return err
	}
	prefix := text[:syntax.Complete(text)]
	if whole {
		if !hasStatement(text) {
			return errEmptySpec
		}
		if hasStatement(text[len(prefix):]) {
			// A statement is left unfinished: the parser says where.
			if _, err := h.sess.Parse(text); err != nil {
				return err
			}
			return errUnfinished
		}
	}
	if !hasStatement(prefix) {
		return nil // "assigns nothing" may only mean the rest is to come
	}
	// Which names a spec outputs depends on all of it (without a fetch
	// line, the last one assigned), so the prefix is checked with a
	// statement after it that gives it a valid output; errors in that
	// probe are not the prefix's.
	_, err := h.sess.Parse(prefix + probe)
	var se *syntax.Error
	if errors.As(err, &se) && se.Line > strings.Count(prefix, "\n") {
		return nil
	}
	return err
}

// probe follows a spec prefix being checked; see check.
const probe = "_marsfs_write_check = zeros(1)\nfetch _marsfs_write_check\n"

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
