package fs

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
)

// root is the tree's root: /README, /sessions, /cluster.
func (s *Server) root() *node {
	return &node{name: "/", path: "/", dir: true, perm: 0555, list: func(c *conn) ([]*node, error) {
		ents := []*node{
			textFile("/", "README", func() (string, error) { return readme, nil }),
			s.sessionsNode(),
		}
		if s.cfg.Cluster != nil {
			ents = append(ents, dirNode("/", "cluster", s.clusterDir))
		}
		return ents, nil
	}}
}

const sessionsPath = "/sessions"

// sessionsDir lists clone and every open session.
func (s *Server) sessionsDir(c *conn) ([]*node, error) {
	ents := []*node{s.cloneFile()}
	// This scheduler's sessions only while it knows no other holds them
	// at a later epoch (engine.Fence): after a pause it confirms first.
	if err := s.eng.Serve(context.Background(), 0); err != nil {
		return nil, fenceErrno(err)
	}
	for _, sess := range s.eng.Sessions() {
		if s.eng.Serve(context.Background(), sess.ID()) == nil {
			ents = append(ents, s.sessionDir(sess))
		}
	}
	if s.forwarding(c) {
		ents = append(ents, s.remoteSessions(c)...)
		sessions := ents[1:]
		sort.Slice(sessions, func(i, j int) bool {
			a, _ := strconv.Atoi(sessions[i].name)
			b, _ := strconv.Atoi(sessions[j].name)
			return a < b
		})
	}
	return ents, nil
}

// sessionsNode is /sessions.
func (s *Server) sessionsNode() *node {
	n := dirNode("/", "sessions", s.sessionsDir)
	n.lookup = s.lookupSession
	return n
}

// home is this scheduler's name for ctl's home line.
func (s *Server) home() string {
	if s.cfg.Peers != nil {
		return s.cfg.Peers.Self()
	}
	return "scheduler"
}

// lookupSession finds /sessions/<name>: clone, a session of this
// scheduler, or one of another's.
func (s *Server) lookupSession(c *conn, name string) (*node, error) {
	if name == "clone" {
		return s.cloneFile(), nil
	}
	if id, err := strconv.Atoi(name); err == nil {
		if sess, ok := s.eng.Session(id); ok {
			err := s.eng.Serve(context.Background(), id)
			var moved *engine.MovedError
			switch {
			case err == nil:
				return s.sessionDir(sess), nil
			case errors.As(err, &moved) && s.forwarding(c):
				return s.remoteSession(name, moved.Home), nil
			default:
				return nil, fenceErrno(err)
			}
		}
	}
	return s.lookupRemote(c, name)
}

// cloneFile creates a session at each open and reads as its number.
func (s *Server) cloneFile() *node {
	return &node{name: "clone", path: join(sessionsPath, "clone"), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() == p9.WriteOnly && c.forwarded {
				// Another scheduler makes a session it numbered here.
				return &cloneAdopt{s: s, c: c}, nil
			}
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			id, err := s.cloneAt(c, s.eng.NextSession())
			if err != nil {
				// No session to hold an error file: the errno (ENOSPC
				// for a full state dir) and the server's log say why.
				log.Printf("marsfs: clone for %s refused: %v", c.ident, err)
				return nil, refusal(err, linux.EIO)
			}
			return &snapshot{r: strings.NewReader(fmt.Sprintf("%d\n", id))}, nil
		}}
}

// cloneAdopt takes, at the clunk, the number another scheduler wrote.
type cloneAdopt struct {
	s    *Server
	c    *conn
	text []byte
	mu   sync.Mutex
}

func (h *cloneAdopt) ReadAt(p []byte, off int64) (int, error) { return 0, linux.EBADF }
func (h *cloneAdopt) WriteAt(p []byte, off int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.text)+len(p) > 32 {
		return 0, linux.EINVAL
	}
	h.text = append(h.text, p...)
	if strings.HasSuffix(string(h.text), "\n") {
		if err := h.s.adoptClone(h.c, string(h.text)); err != nil {
			return 0, err
		}
		h.text = nil
	}
	return len(p), nil
}
func (h *cloneAdopt) Close() error { return nil }

// sessionDir is /sessions/<N>. Only its owner may walk into it.
func (s *Server) sessionDir(sess *engine.Session) *node {
	dir := join(sessionsPath, strconv.Itoa(sess.ID()))
	n := &node{name: strconv.Itoa(sess.ID()), path: dir, dir: true, perm: 0700, owner: sess.Owner()}
	n.list = func(c *conn) ([]*node, error) {
		if c.ident != sess.Owner() {
			return nil, linux.EPERM
		}
		s.touch(sess.ID())
		return []*node{
			ctlFile(dir, "ctl", func() (string, error) { return sessionText(sess, s.home()), nil }, func(msg string) error {
				err := ctl(sessionVerbs, sess, msg)
				if err != nil {
					sess.SetError(err.Error())
				}
				return err
			}),
			s.submitFile(dir, sess),
			textFile(dir, "error", func() (string, error) { return line(sess.Error()), nil }),
			dirNode(dir, "graphs", func(c *conn) ([]*node, error) { return s.graphsDir(dir, sess), nil }),
			// One line a graph: what the session keeps of the oldest too.
			textFile(dir, "history", func() (string, error) {
				var b strings.Builder
				for _, g := range sess.Graphs() {
					b.WriteString(g.Summary() + "\n")
				}
				return b.String(), nil
			}),
			s.tensorsDir(dir, sess),
		}, nil
	}
	return own(n, sess.Owner())
}

// own marks n and the entries below it as owned by ident.
func own(n *node, ident string) *node {
	n.owner = ident
	if list := n.list; list != nil {
		n.list = func(c *conn) ([]*node, error) {
			ents, err := list(c)
			for _, e := range ents {
				own(e, ident)
			}
			return ents, err
		}
	}
	if lookup := n.lookup; lookup != nil {
		n.lookup = func(c *conn, name string) (*node, error) {
			e, err := lookup(c, name)
			if e != nil {
				own(e, ident)
			}
			return e, err
		}
	}
	return n
}

// line returns s as a line of text: empty stays empty, else it ends in a
// newline.
func line(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// graphsDir lists a session's graphs, then last.
func (s *Server) graphsDir(parent string, sess *engine.Session) []*node {
	dir := join(parent, "graphs")
	graphs := sess.Graphs()
	var ents []*node
	for _, g := range graphs {
		ents = append(ents, graphDir(dir, strconv.Itoa(g.ID()), sess, g))
	}

	if len(graphs) > 0 {
		// last is the newest graph under another name: a directory with
		// the same files rather than a symlink, so that it reads alike
		// through every 9P client and FUSE. Its QIDs are its own (and
		// change when a new graph comes), as clients that see a QID twice
		// in a tree take it for a hard link, which directories cannot be.
		last := graphs[len(graphs)-1]
		n := graphDir(dir, fmt.Sprintf("last@%d", last.ID()), sess, last)
		n.name = "last"
		ents = append(ents, n)
	}
	return ents
}

// graphDir is /sessions/<N>/graphs/<G>; id names it in QIDs.
func graphDir(parent, id string, sess *engine.Session, g *engine.Graph) *node {
	return dirNode(parent, id, func(c *conn) ([]*node, error) {
		dir := join(parent, id)
		if g.Forgotten() {
			// Past --graph-history: its summary only.
			return []*node{
				textFile(dir, "spec", func() (string, error) { return line(g.Spec()), nil }),
				textFile(dir, "status", func() (string, error) { return statusText(g), nil }),
				blockingFile(dir, "wait", g.Done(), func() (string, error) { return statusText(g), nil }),
				textFile(dir, "error", func() (string, error) { return line(g.Err()), nil }),
			}, nil
		}
		return []*node{
			textFile(dir, "spec", func() (string, error) { return line(g.Spec()), nil }),
			textFile(dir, "spec.json", func() (string, error) {
				b, err := g.SpecJSON()
				if err != nil {
					return "", linux.EIO
				}
				return line(string(b)), nil
			}),
			textFile(dir, "status", func() (string, error) { return statusText(g), nil }),
			blockingFile(dir, "wait", g.Done(), func() (string, error) { return statusText(g), nil }),
			textFile(dir, "progress", func() (string, error) { return progressText(g), nil }),
			textFile(dir, "error", func() (string, error) { return line(g.Err()), nil }),
			textFile(dir, "operands", func() (string, error) { return operandsText(g), nil }),
			planFile(dir, g),
			eventsFile(dir, g),
			textFile(dir, "timeline.svg", func() (string, error) { return timelineSVG(g, graphTitle(sess, g)), nil }),
			planPicture(dir, g, graphTitle(sess, g)),
			ctlFile(dir, "ctl", func() (string, error) { return statusText(g), nil }, func(msg string) error {
				err := ctl(graphVerbs, g, msg)
				if err != nil {
					sess.SetError(err.Error())
				}
				return err
			}),
		}, nil
	})
}

// clusterDir is /cluster: members, and a directory a worker.
func (s *Server) clusterDir(c *conn) ([]*node, error) {
	cl := s.cfg.Cluster
	return []*node{
		textFile("/cluster", "members", func() (string, error) { return line(cl.Members()), nil }),
		textFile("/cluster", "metrics", func() (string, error) {
			text, err := s.metricsText()
			if err != nil {
				return "", linux.EIO
			}
			return text, nil
		}),
		dirNode("/cluster", "workers", func(c *conn) ([]*node, error) {
			var ents []*node
			for _, w := range cl.Workers() {
				dir := join("/cluster/workers", w)
				ents = append(ents, dirNode("/cluster/workers", w, func(c *conn) ([]*node, error) {
					return []*node{textFile(dir, "status", func() (string, error) {
						st, ok := cl.WorkerStatus(w)
						if !ok {
							return "", linux.ENOENT
						}
						return line(st), nil
					})}, nil
				}))
			}
			return ents, nil
		}),
	}, nil
}

const readme = `marsfs: chunked tensors computed across workers, as files.

/README                       this text
/cluster/members              one line a member: name addr role state
/cluster/workers/W/status     a worker's slots, queue, memory and chunks
/cluster/metrics              counters and gauges in the Prometheus text format
/sessions/clone               open and read: makes a session, reads its number N
/sessions/N/ctl               read: the session's summary; write "close"
/sessions/N/submit            write a spec, then close: makes a graph
/sessions/N/error             why the session's last write was refused
/sessions/N/graphs/G/         one a submission (G = 1, 2, ...); last is the newest;
                              past the last 16 (--graph-history), spec status wait error only
/sessions/N/history           one line a graph: number, state, start, seconds, spec, error
    spec spec.json            the spec as written, and its JSON form
    status                    STATE, then "key value" lines
    wait                      a read waits for the graph to end, then shows status
    progress                  one line: done/total operands, bytes, elapsed
    error                     why the graph FAILED
    operands                  live: key, op, state, worker, attempts, elapsed
    plan                      the chunk graph as placed: balance, transfer, one line an operand
    events                    state transitions; a read at the end waits for more
    timeline.svg              the run so far as a picture: a row a worker slot, a bar an operand
    plan.svg                  the chunk graph as a picture, coloured by worker
    ctl                       write "cancel"
/sessions/N/tensors/NAME/     every output kept by the session
    meta                      shape, dtype, chunks, state
    data                      raw little-endian C-order bytes
    npy                       NumPy .npy
    text                      NumPy-style print
    arrow                     Apache Arrow IPC stream: one column, a row an index of axis 0
    csv                       1-D as one column, 2-D as rows
    chunks/I_J/{data,meta}    one chunk; meta names its worker
/sessions/N/tensors/NAME.npy  create and write a .npy stream: uploads tensor NAME

Example:
    n=$(cat /sessions/clone)
    echo 'x = arange(10) * 2' > /sessions/$n/submit
    cat /sessions/$n/graphs/last/wait /sessions/$n/tensors/x/text
    cat /sessions/$n/error      # when a write was refused
`
