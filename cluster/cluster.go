// Package cluster is the membership layer of marsfs: every scheduler and
// worker process is a node of a hashicorp/memberlist gossip cluster that
// publishes, as node metadata, its role and the TCP address where it serves
// control requests and chunk data. Nodes learn of each other's arrival and
// departure (graceful or by failure detection) from a member table that
// signals every change.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// A Role is what a node does in the cluster.
type Role string

// The roles of marsfs nodes.
const (
	RoleScheduler Role = "scheduler"
	RoleWorker    Role = "worker"
)

// Meta is the metadata a node publishes to the others.
type Meta struct {
	Role  Role   `json:"r"`
	Addr  string `json:"a,omitempty"` // TCP host:port of the node's control and data service
	Slots int    `json:"s,omitempty"` // kernels the node runs at once
	PID   int    `json:"p,omitempty"`
	// Space is a scheduler's share of the cluster's chunk, job and
	// session numbers (see package exec/ident).
	Space uint32 `json:"i,omitempty"`
}

// MaxMeta is the largest encoded Meta memberlist carries.
const MaxMeta = memberlist.MetaMaxSize

// wireMeta is Meta as gossiped: Leaving is set just before a graceful
// departure so that the others can tell it from a failure (memberlist reports
// both through NotifyLeave).
type wireMeta struct {
	Meta
	Leaving bool `json:"l,omitempty"`
}

func (m Meta) encode(leaving bool) ([]byte, error) {
	b, err := json.Marshal(wireMeta{m, leaving})
	if err != nil {
		return nil, err
	}
	if len(b) > MaxMeta {
		return nil, fmt.Errorf("cluster: node metadata is %d bytes, more than %d", len(b), MaxMeta)
	}
	return b, nil
}

func decodeMeta(b []byte) wireMeta {
	var m wireMeta
	// A node that publishes no or foreign metadata has no role: callers
	// ignore it rather than fail.
	_ = json.Unmarshal(b, &m)
	return m
}

// State is a member's liveness as this node sees it.
type State uint8

// Member states.
const (
	Alive  State = iota
	Left         // departed gracefully
	Failed       // declared dead by failure detection
)

func (s State) String() string {
	switch s {
	case Alive:
		return "alive"
	case Left:
		return "left"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// A Member is one node of the cluster.
type Member struct {
	Name   string
	Gossip string // memberlist host:port
	State  State
	Meta   Meta
	Since  time.Time // when the member entered State
}

// departedTTL is how long the member table remembers a departed node.
const departedTTL = 10 * time.Minute

// Config configures a node.
type Config struct {
	Name string // unique in the cluster
	// BindAddr is the host:port memberlist listens on (UDP and TCP);
	// "127.0.0.1:0" when empty, port 0 picking a free port.
	BindAddr string
	// Join lists gossip addresses of nodes already in the cluster; empty
	// starts a new cluster.
	Join []string
	// JoinTimeout bounds how long Join retries a cluster it cannot reach
	// (10 s when 0), so that a wrong address or key is told, not waited on.
	JoinTimeout time.Duration
	// Meta is published to the other nodes.
	Meta Meta
	// SecretKey, when set (16, 24 or 32 bytes), encrypts gossip with AES.
	// Every node of the cluster must use the same key.
	SecretKey []byte
	// Fast selects timings for tests on loopback: joins are seen within
	// ~100 ms and a crashed node is declared failed within ~2 s. A node
	// must stay silent for over a second to be declared failed: a test
	// machine's two cores, busy with several processes' kernels, starve a
	// process's gossip for half a second at times, and a shorter
	// suspicion declared live workers dead (three at once, from a starved
	// scheduler).
	// Otherwise memberlist's local-network defaults apply (failure noticed
	// within ~5 s).
	Fast bool
	// LogOutput receives memberlist's log; discarded when nil.
	LogOutput io.Writer
	// OnChange, if not nil, is called on every change of the member table,
	// from memberlist's goroutines. It must not block.
	OnChange func(Member)
	// OnMsg, if not nil, is given each message another node sent this
	// one (Send), from memberlist's goroutines, one call a message, in no
	// promised order. It must not block, nor keep msg.
	OnMsg func(msg []byte)
}

// A Node is this process's membership in the cluster.
type Node struct {
	list        *memberlist.Memberlist
	onChange    func(Member)
	onMsg       func([]byte)
	leavingMeta []byte

	mu      sync.Mutex
	meta    []byte          // encoded wireMeta
	leaving map[string]bool // members that announced their departure
	members map[string]Member
	changed chan struct{} // closed and replaced on every change
	closed  bool
}

// memberlistConfig returns the memberlist configuration for cfg.
func memberlistConfig(cfg *Config) (*memberlist.Config, error) {
	mc := memberlist.DefaultLocalConfig()
	// Gossip is not compressed: its messages are a few hundred bytes, and
	// memberlist's LZW makes a writer (a table cleared anew) for every
	// one, the largest part of an idle member's CPU.
	mc.EnableCompression = false
	if cfg.Fast {
		mc.ProbeInterval = 200 * time.Millisecond
		mc.ProbeTimeout = 250 * time.Millisecond
		mc.GossipInterval = 20 * time.Millisecond
		mc.PushPullInterval = time.Second
		mc.SuspicionMult = 6
		mc.SuspicionMaxTimeoutMult = 2
		mc.TCPTimeout = 500 * time.Millisecond
		mc.GossipToTheDeadTime = 2 * time.Second
	}
	mc.Name = cfg.Name
	bind := cfg.BindAddr
	if bind == "" {
		bind = "127.0.0.1:0"
	}
	host, port, err := net.SplitHostPort(bind)
	if err != nil {
		return nil, fmt.Errorf("cluster: bind address %q: %v", bind, err)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return nil, fmt.Errorf("cluster: bind address %q: bad port", bind)
	}
	mc.BindAddr, mc.BindPort = host, p
	mc.AdvertisePort = p
	if host == "0.0.0.0" || host == "::" {
		mc.AdvertiseAddr = ""
	} else {
		mc.AdvertiseAddr = host
	}
	if len(cfg.SecretKey) > 0 {
		switch len(cfg.SecretKey) {
		case 16, 24, 32:
		default:
			return nil, fmt.Errorf("cluster: secret key is %d bytes, want 16, 24 or 32", len(cfg.SecretKey))
		}
		mc.SecretKey = append([]byte(nil), cfg.SecretKey...)
	}
	out := cfg.LogOutput
	if out == nil {
		out = io.Discard
	}
	mc.Logger = log.New(out, "memberlist "+cfg.Name+": ", log.LstdFlags)
	return mc, nil
}

// Join starts a node and joins the cluster through cfg.Join. It fails if
// none of the Join addresses answers before ctx is done.
func Join(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Name == "" {
		return nil, errors.New("cluster: node name is empty")
	}
	meta, err := cfg.Meta.encode(false)
	if err != nil {
		return nil, err
	}
	mc, err := memberlistConfig(&cfg)
	if err != nil {
		return nil, err
	}
	leavingMeta, err := cfg.Meta.encode(true)
	if err != nil {
		return nil, err
	}
	n := &Node{meta: meta, leavingMeta: leavingMeta, onChange: cfg.OnChange, onMsg: cfg.OnMsg, members: make(map[string]Member),
		leaving: make(map[string]bool), changed: make(chan struct{})}
	mc.Delegate = (*delegate)(n)
	mc.Events = (*events)(n)
	if mc.BindPort == 0 {
		// memberlist picks the port; advertise the one it picked.
		mc.AdvertisePort = 0
	}
	list, err := memberlist.Create(mc)
	if err != nil {
		return nil, fmt.Errorf("cluster: start %s: %w", cfg.Name, err)
	}
	n.list = list
	if len(cfg.Join) > 0 {
		timeout := cfg.JoinTimeout
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		giveUp := time.After(timeout)
		for {
			_, err = list.Join(cfg.Join)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				list.Shutdown()
				return nil, fmt.Errorf("cluster: join %v: %w", cfg.Join, err)
			case <-giveUp:
				list.Shutdown()
				return nil, joinError(cfg.Join, timeout, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return n, nil
}

// joinError says why a join failed for timeout: the other end speaks with
// another key (or none), or could not be reached at all.
func joinError(addrs []string, timeout time.Duration, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "decrypt") || strings.Contains(msg, "encrypt") || strings.Contains(msg, "label") {
		return fmt.Errorf("cluster: authentication failed joining %s: the cluster's key differs from this one (--key-file, $MARSFS_KEY): %w",
			strings.Join(addrs, ","), err)
	}
	return fmt.Errorf("cluster: cannot reach the cluster at %s in %v: %w", strings.Join(addrs, ","), timeout, err)
}

// Rejoin joins the cluster again through addrs: a node whose peers there
// died (a scheduler killed) meets the process started again at their
// address, which knows no one. It fails if none answers.
func (n *Node) Rejoin(addrs []string) error {
	_, err := n.list.Join(addrs)
	return err
}

// Name is the node's name.
func (n *Node) Name() string { return n.list.LocalNode().Name }

// GossipAddr is the host:port other nodes pass in Config.Join to join
// through this node.
func (n *Node) GossipAddr() string {
	ln := n.list.LocalNode()
	return net.JoinHostPort(ln.Addr.String(), strconv.Itoa(int(ln.Port)))
}

// Members returns the member table by name: the alive nodes, this one
// included, and those that departed in the last ten minutes.
func (n *Node) Members() []Member {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Member, 0, len(n.members))
	for _, m := range n.members {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Member returns the named member.
func (n *Node) Member(name string) (Member, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	m, ok := n.members[name]
	return m, ok
}

// Changed returns a channel closed at the next change of the member table.
// Read Members after taking the channel to miss no change.
func (n *Node) Changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.changed
}

// Leave announces the node's departure, waiting up to timeout for the
// message to spread, then stops the node.
func (n *Node) Leave(timeout time.Duration) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.meta = n.leavingMeta
	n.mu.Unlock()
	// Tell the others this is a departure, not a crash, then leave.
	_ = n.list.UpdateNode(timeout / 2)
	err := n.list.Leave(timeout / 2)
	if serr := n.Close(); err == nil {
		err = serr
	}
	return err
}

// Close stops the node without announcing its departure: the others notice
// it by failure detection.
// Send sends msg to the live member named name, over a TCP connection of
// memberlist's (encrypted as gossip is), where Config.OnMsg receives it.
// It returns once the message is written, not once it is received.
func (n *Node) Send(name string, msg []byte) error {
	for _, mn := range n.list.Members() {
		if mn.Name == name {
			return n.list.SendReliable(mn, msg)
		}
	}
	return fmt.Errorf("cluster: send to %s: no such live member", name)
}

func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	return n.list.Shutdown()
}

func (n *Node) update(mn *memberlist.Node, st State) {
	wm := decodeMeta(mn.Meta)
	m := Member{
		Name:   mn.Name,
		Gossip: net.JoinHostPort(mn.Addr.String(), strconv.Itoa(int(mn.Port))),
		State:  st,
		Meta:   wm.Meta,
		Since:  time.Now(),
	}
	n.mu.Lock()
	switch {
	case st == Alive && wm.Leaving:
		// Announced departure: keep it alive until it is gone.
		n.leaving[m.Name] = true
	case st == Alive:
		delete(n.leaving, m.Name)
	case n.leaving[m.Name]:
		m.State = Left
	}
	if old, ok := n.members[m.Name]; ok && old.State == st {
		m.Since = old.Since
	}
	n.members[m.Name] = m
	for name, old := range n.members {
		if old.State != Alive && m.Since.Sub(old.Since) > departedTTL {
			delete(n.members, name)
		}
	}
	close(n.changed)
	n.changed = make(chan struct{})
	n.mu.Unlock()
	if n.onChange != nil {
		n.onChange(m)
	}
}

// delegate publishes the node's metadata and hands on the messages of
// Send; marsfs sends no user gossip.
type delegate Node

func (d *delegate) NodeMeta(limit int) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.meta) > limit {
		return nil
	}
	return d.meta
}
func (d *delegate) NotifyMsg(msg []byte) {
	if d.onMsg != nil {
		d.onMsg(msg)
	}
}
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *delegate) LocalState(join bool) []byte                { return nil }
func (d *delegate) MergeRemoteState(buf []byte, join bool)     {}

// events keeps the member table.
type events Node

func (e *events) NotifyJoin(mn *memberlist.Node)   { (*Node)(e).update(mn, Alive) }
func (e *events) NotifyUpdate(mn *memberlist.Node) { (*Node)(e).update(mn, Alive) }
func (e *events) NotifyLeave(mn *memberlist.Node) {
	// memberlist does not say whether the node left or died; update tells
	// them apart by the node's last metadata.
	(*Node)(e).update(mn, Failed)
}
