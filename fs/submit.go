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
	"marsfs/tensor/spec"
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
}

func (h *submitter) ReadAt(p []byte, off int64) (int, error) { return 0, linux.EBADF }

func (h *submitter) WriteAt(p []byte, off int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed {
		return 0, linux.EINVAL
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
	if err := h.check(); err != nil {
		h.fail(err.Error())
		return 0, linux.EINVAL
	}
	return len(p), nil
}

// check parses what can be judged of the text so far; see submitFile.
func (h *submitter) check() error {
	text := string(h.text)
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		if !json.Valid(h.text) {
			return nil // incomplete, or wrong: the clunk tells
		}
		_, err := spec.Parse(text, h.sess.Env())
		return err
	}
	prefix := text[:syntax.Complete(text)]
	if !hasStatement(prefix) {
		return nil // "assigns nothing" may only mean the rest is to come
	}
	// Which names a spec outputs depends on all of it (without a fetch
	// line, the last one assigned), so the prefix is checked with a
	// statement after it that gives it a valid output; errors in that
	// probe are not the prefix's.
	_, err := spec.Parse(prefix+probe, h.sess.Env())
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
	h.text = nil
	h.sess.SetError(msg)
}

// Close submits the text. Session.Submit records a refusal in the
// session's error file.
func (h *submitter) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed {
		return errRefused
	}
	if len(strings.TrimSpace(string(h.text))) == 0 {
		return nil // opened and closed: nothing to submit
	}
	_, err := h.sess.Submit(string(h.text))
	h.text = nil
	return err
}

var (
	errRefused   = errors.New("submission refused at a write")
	errAbandoned = errors.New("upload abandoned")
)

// panicError carries a recovered panic as an error.
type panicError struct{ v any }

func (e panicError) Error() string { return fmt.Sprintf("internal error: %v", e.v) }
