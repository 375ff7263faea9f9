package fs

import (
	"strconv"
	"strings"
	"sync"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// This file makes one tree of the sessions of every scheduler of a
// cluster (SPEC: Schedulers). Each session lives on one scheduler, its
// home, chosen when the session is made by consistent hashing of its
// number over the live schedulers (Peers.Home). Every scheduler's tree
// lists every session of the cluster and serves any file of any one: a
// walk into a session homed elsewhere continues on a 9P connection to the
// home, forwarded as the client's identity (DialAs), and the fid the
// client then holds is the home's file, so that every later request on it
// (reads, writes, creates, removes, blocking reads of wait and events)
// goes to the home as it is. The home checks ownership, as for its own
// clients: a forwarded connection is its client's identity there.
//
// A forwarded connection sees only the home's own sessions: nothing is
// forwarded twice, and a listing asks each scheduler once.
//
// Sessions stay where they were made when the ring changes: a session's
// graphs, tensors and their chunks' records live in its home's memory, and
// moving them would be a migration of live state for the sake of a
// balance that new sessions restore anyway. Only new sessions follow the
// ring; a session's home is found by asking the schedulers (and
// remembered), not by hashing again.

// Peers is what a server knows of the other schedulers of its cluster.
// Its methods may be called at any time from any goroutine.
type Peers interface {
	// Self is this scheduler's name.
	Self() string
	// Home returns the scheduler whose session number n is to be, on
	// the ring of the live schedulers.
	Home(n int) string
	// Addrs gives the 9P addresses of the other live schedulers, by
	// name.
	Addrs() map[string]string
}

// peer returns the connection's forwarded client to scheduler name.
func (s *Server) peer(c *conn, name string) (*Client, error) {
	c.peersMu.Lock()
	defer c.peersMu.Unlock()
	if pc, ok := c.peers[name]; ok {
		return pc, nil
	}
	addr, ok := s.cfg.Peers.Addrs()[name]
	if !ok {
		return nil, linux.EHOSTDOWN
	}
	pc, err := DialAs(addr, s.cfg.Key, c.ident)
	if err != nil {
		return nil, err
	}
	if c.peers == nil {
		c.peers = make(map[string]*Client)
	}
	c.peers[name] = pc
	return pc, nil
}

// dropPeer forgets a forwarded client that failed.
func (c *conn) dropPeer(name string, pc *Client) {
	c.peersMu.Lock()
	if c.peers[name] == pc {
		delete(c.peers, name)
		pc.Close()
	}
	c.peersMu.Unlock()
}

// closePeers closes the connection's forwarded clients.
func (c *conn) closePeers() {
	c.peersMu.Lock()
	defer c.peersMu.Unlock()
	for _, pc := range c.peers {
		pc.Close()
	}
	c.peers = nil
}

// forwarding reports whether sessions beyond this scheduler's are shown
// to c.
func (s *Server) forwarding(c *conn) bool { return s.cfg.Peers != nil && !c.forwarded }

// remoteSessions lists the sessions of the other schedulers, as nodes
// whose walks go to their homes. A scheduler that does not answer is
// left out.
func (s *Server) remoteSessions(c *conn) []*node {
	type answer struct {
		home  string
		names []string
	}
	addrs := s.cfg.Peers.Addrs()
	answers := make(chan answer, len(addrs))
	var wg sync.WaitGroup
	for name := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pc, err := s.peer(c, name)
			if err != nil {
				return
			}
			ents, err := pc.ReadDir(sessionsPath)
			if err != nil {
				c.dropPeer(name, pc)
				return
			}
			a := answer{home: name}
			for _, e := range ents {
				if e.Name != "clone" {
					a.names = append(a.names, e.Name)
				}
			}
			answers <- a
		}()
	}
	wg.Wait()
	close(answers)
	var out []*node
	for a := range answers {
		for _, n := range a.names {
			if id, err := strconv.Atoi(n); err == nil {
				s.homes.Store(id, a.home)
				out = append(out, s.remoteSession(n, a.home))
			}
		}
	}
	return out
}

// remoteSession is /sessions/<name> of a session homed on scheduler home.
func (s *Server) remoteSession(name, home string) *node {
	return &node{name: name, path: join(sessionsPath, name), dir: true, perm: 0700, home: home}
}

// lookupRemote finds the home of session name among the other
// schedulers.
func (s *Server) lookupRemote(c *conn, name string) (*node, error) {
	id, err := strconv.Atoi(name)
	if err != nil || !s.forwarding(c) {
		return nil, linux.ENOENT
	}
	if h, ok := s.homes.Load(id); ok {
		if _, live := s.cfg.Peers.Addrs()[h.(string)]; live {
			return s.remoteSession(name, h.(string)), nil
		}
	}
	for _, n := range s.remoteSessions(c) {
		if n.name == name {
			return n, nil
		}
	}
	return nil, linux.ENOENT
}

// walkRemote walks names from session directory n, homed elsewhere: the
// file returned is the home's.
func (s *Server) walkRemote(c *conn, n *node, names []string) ([]p9.QID, p9.File, error) {
	pc, err := s.peer(c, n.home)
	if err != nil {
		return nil, nil, linux.EHOSTDOWN
	}
	qids, f, err := pc.root.Walk(append([]string{"sessions", n.name}, names...))
	if err != nil {
		if !isErrno(err) {
			c.dropPeer(n.home, pc)
			return nil, nil, linux.EHOSTDOWN
		}
		return nil, nil, err
	}
	return qids[2:], newRemoteFile(c, f, append([]string{n.name}, names...)), nil
}

func isErrno(err error) bool {
	_, ok := err.(linux.Errno)
	return ok
}

// cloneAt makes session n, chosen by this scheduler, on its home: the
// scheduler the ring names, or this one when that is this one or cannot
// be reached.
func (s *Server) cloneAt(c *conn, n int) (int, error) {
	if s.forwarding(c) {
		if home := s.cfg.Peers.Home(n); home != "" && home != s.cfg.Peers.Self() {
			if pc, err := s.peer(c, home); err == nil {
				if err := pc.WriteFile(join(sessionsPath, "clone"), []byte(strconv.Itoa(n)+"\n")); err == nil {
					s.homes.Store(n, home)
					return n, nil
				}
				c.dropPeer(home, pc)
			}
		}
	}
	sess, err := s.eng.NewSessionAt(c.ident, n)
	if err != nil {
		return 0, err
	}
	s.touch(sess.ID())
	return n, nil
}

// adoptClone makes the session a forwarded connection's scheduler chose
// for this one (a write of its number to clone).
func (s *Server) adoptClone(c *conn, text string) error {
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || !c.forwarded {
		return linux.EINVAL
	}
	sess, err := s.eng.NewSessionAt(c.ident, n)
	if err != nil {
		return refusal(err, linux.EEXIST)
	}
	s.touch(sess.ID())
	return nil
}

// A remoteFile is a file of a session's home as this server hands it to
// its client: the p9 client's file, whose walks give remoteFiles too, and
// whose create makes the new file on a clone of the directory's fid. (The
// p9 client turns the directory's own fid into the new file, as 9P's
// lcreate does, while the p9 server here keeps the directory's file and
// clunks it apart from the new one.) A read of a file that blocks (a
// graph's wait and events) ends at the client's Tflush, as a local one
// does; the home's read goes on and its answer is dropped.
type remoteFile struct {
	p9.File
	c        *conn
	blocking bool
}

func newRemoteFile(c *conn, f p9.File, path []string) remoteFile {
	last := ""
	if len(path) > 0 {
		last = path[len(path)-1]
	}
	return remoteFile{File: f, c: c, blocking: last == "wait" || last == "events"}
}

func (f remoteFile) Walk(names []string) ([]p9.QID, p9.File, error) {
	qids, nf, err := f.File.Walk(names)
	if err != nil {
		return nil, nil, err
	}
	if len(names) == 0 {
		return qids, remoteFile{File: nf, c: f.c, blocking: f.blocking}, nil
	}
	return qids, newRemoteFile(f.c, nf, names), nil
}

func (f remoteFile) WalkGetAttr(names []string) ([]p9.QID, p9.File, p9.AttrMask, p9.Attr, error) {
	qids, nf, mask, attr, err := f.File.WalkGetAttr(names)
	if err != nil {
		return nil, nil, mask, attr, err
	}
	if len(names) == 0 {
		return qids, remoteFile{File: nf, c: f.c, blocking: f.blocking}, mask, attr, nil
	}
	return qids, newRemoteFile(f.c, nf, names), mask, attr, nil
}

func (f remoteFile) Create(name string, flags p9.OpenFlags, perm p9.FileMode, uid p9.UID, gid p9.GID) (p9.File, p9.QID, uint32, error) {
	_, clone, err := f.File.Walk(nil)
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	nf, qid, iounit, err := clone.Create(name, flags, perm, uid, gid)
	if err != nil {
		clone.Close()
		return nil, p9.QID{}, 0, err
	}
	return remoteFile{File: nf, c: f.c}, qid, iounit, nil
}

func (f remoteFile) ReadAt(p []byte, off int64) (int, error) {
	if !f.blocking {
		return f.File.ReadAt(p, off)
	}
	type result struct {
		n   int
		err error
	}
	// The read may outlive this call: it fills a buffer of its own.
	buf := make([]byte, len(p))
	done := make(chan result, 1)
	go func() {
		n, err := f.File.ReadAt(buf, off)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return copy(p, buf[:r.n]), r.err
	case <-f.c.flushes():
		return 0, linux.EINTR
	case <-f.c.ctx.Done():
		return 0, linux.EINTR
	}
}
