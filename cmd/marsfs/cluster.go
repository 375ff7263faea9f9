package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"marsfs/cluster"
	"marsfs/cluster/ring"
	"marsfs/exec/engine"
	"marsfs/exec/sched"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/fs/prom"
	"marsfs/shm"
)

// upCluster runs a scheduler and the 9P server in this process and n worker
// processes (this binary, as `marsfs worker`) joined to it, until ctx ends;
// then it stops the server, the workers and the scheduler, in that order.
func upCluster(ctx context.Context, ls []net.Listener, sf *serveFlags, wf *workerFlags, n int, gossip string, respawn bool) error {
	closeAll := func() {
		for _, l := range ls {
			l.Close()
		}
	}
	key, err := wire.LoadKey(wf.keyFile)
	if err != nil {
		closeAll()
		return err
	}
	state, err := openState(sf.stateDir)
	if err != nil {
		closeAll()
		return err
	}
	tuneGC()
	go giveBack(ctx, giveBackEvery)
	gossip = state.gossip(gossip)
	scfg := sched.Config{Gossip: gossip, Addr: treeAddr(ls, gossip), SecretKey: key, NoWorkerWait: sf.workerWait, Logf: logPrefixed}
	state.expect(&scfg)
	sched, err := sched.New(ctx, scfg)
	if err != nil {
		closeAll()
		return err
	}
	state.keepGossip(sched.GossipAddr())
	defer sched.Close()
	self, err := os.Executable()
	if err != nil {
		closeAll()
		return err
	}
	// The workers share this host's memory (the cgroup's, or the RAM): its
	// sizes are resolved here and passed on.
	if err := wf.resolve(n); err != nil {
		closeAll()
		return err
	}
	kids := &children{path: self, respawn: respawn, announce: sched.Announce, survive: state != nil}
	defer kids.stop(5 * time.Second)
	// The workers of the up before this one, which outlived it, come back
	// with the chunks they kept: they count among the n.
	taken := state.takeWorkers(ctx, sched, kids)
	for i := 0; len(taken) < n; i++ {
		name := fmt.Sprintf("worker-%d", i+1)
		if taken[name] {
			continue
		}
		taken[name] = true
		args := []string{"--join", sched.GossipAddr()}
		if kids.survive {
			args = append(args, "--alone-exit", (wf.orphan + 30*time.Second).String())
		}
		if wf.cpuprofile != "" {
			args = append(args, "--cpuprofile", fmt.Sprintf("%s.%s", wf.cpuprofile, name))
		}
		if err := kids.start(name, append(args, wf.args()...)); err != nil {
			closeAll()
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = sched.WaitWorkers(wctx, n)
	cancel()
	if err != nil {
		closeAll()
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("waiting for the workers: %w", err)
	}
	fmt.Printf("marsfs: %d workers; more join with: marsfs worker --join %s\n", n, sched.GossipAddr())
	eng := engine.New(sched)
	eng.SetSpace(sched.Space())
	defer eng.Close()
	state.restore(ctx, eng, sched)
	sf.peers = schedPeers{sched}
	sf.metrics = processMetrics(kids, state)
	return serve(ctx, eng, schedCluster{sched}, ls, sf)
}

// scheduler runs a scheduler and the 9P server; workers join it.
func schedulerCmd(args []string) error {
	f := flag.NewFlagSet("scheduler", flag.ContinueOnError)
	var sf serveFlags
	sf.add(f)
	gossip := f.String("gossip", "127.0.0.1:7946", "memberlist address (workers --join it)")
	join := f.String("join", "", "gossip addresses of a cluster to join, comma-separated")
	keyFile := f.String("key-file", "", "file holding the cluster's shared secret (default $MARSFS_KEY); required beyond loopback")
	f.StringVar(&sf.dataDir, "data-dir", "", "the directory of the files specs name; its workers must see the same files there (default none: a spec naming a file is refused)")
	if _, err := parse(f, args); err != nil {
		return err
	}
	key, err := wire.LoadKey(*keyFile)
	if err != nil {
		return err
	}
	sf.key = key
	ls, err := sf.listen()
	if err != nil {
		return err
	}
	state, err := openState(sf.stateDir)
	if err != nil {
		for _, l := range ls {
			l.Close()
		}
		return err
	}
	ctx, stop := signals()
	defer stop()
	tuneGC()
	go giveBack(ctx, giveBackEvery)
	scfg := sched.Config{Gossip: *gossip, Join: list(*join), Addr: treeAddr(ls, *gossip), SecretKey: key, NoWorkerWait: sf.workerWait, Logf: logPrefixed}
	state.expect(&scfg)
	sched, err := sched.New(ctx, scfg)
	if err != nil {
		for _, l := range ls {
			l.Close()
		}
		return err
	}
	defer sched.Close()
	fmt.Printf("marsfs: scheduler %s (space %v) gossip at %s\n", sched.Name(), sched.Space(), sched.GossipAddr())
	eng := engine.New(sched)
	eng.SetSpace(sched.Space())
	defer eng.Close()
	state.restore(ctx, eng, sched)
	sf.peers = schedPeers{sched}
	sf.metrics = processMetrics(nil, state)
	return serve(ctx, eng, schedCluster{sched}, ls, &sf)
}

// worker runs a worker until SIGINT or SIGTERM.
func workerCmd(args []string) error {
	f := flag.NewFlagSet("worker", flag.ContinueOnError)
	var wf workerFlags
	wf.add(f, 1)
	name := f.String("name", "", "the worker's name in the cluster (default worker-HOST-PID)")
	listen := f.String("listen", "127.0.0.1:0", "address of the worker's chunk and control service")
	gossip := f.String("gossip", "127.0.0.1:0", "memberlist address")
	join := f.String("join", "", "gossip addresses of the cluster (the scheduler's), comma-separated")
	f.StringVar(&wf.dataDir, "data-dir", "", "the directory of the files specs name, which the worker reads and writes (default none)")
	if _, err := parse(f, args); err != nil {
		return err
	}
	if *join == "" {
		return fmt.Errorf("--join is required: the scheduler's gossip address")
	}
	stopProfile, err := cpuProfile(wf.cpuprofile)
	if err != nil {
		return err
	}
	defer stopProfile()
	key, err := wire.LoadKey(wf.keyFile)
	if err != nil {
		return err
	}
	if wf.slots <= 0 {
		wf.slots = runtime.GOMAXPROCS(0) // the CPUs, whatever --procs says
	}
	if err := wf.resolve(1); err != nil {
		return err
	}
	if wf.procs > 0 {
		runtime.GOMAXPROCS(wf.procs)
	}
	cfg := worker.Config{Name: *name, Listen: *listen, Gossip: *gossip, Join: list(*join), Slots: wf.slots, Mem: wf.mem, SecretKey: key, OrphanGrace: wf.orphan, AloneExit: wf.alone}
	if wf.orphan <= 0 {
		cfg.OrphanGrace = -1 // none: freed at once
	}
	if wf.dataDir != "" {
		data, err := openData(wf.dataDir)
		if err != nil {
			return err
		}
		defer data.Close()
		cfg.Data = data
	}
	switch wf.store {
	case "mem":
	case "shm":
		// Chunks live in shared memory, where kernels write them, and
		// spill to disk; opening the store removes what crashed workers
		// left.
		st, err := shm.Open(shm.Options{Dir: wf.shmDir, SpillDir: wf.spillDir, Limit: wf.shm, Name: *name})
		if err != nil {
			return err
		}
		defer st.Close()
		cfg.Store = shm.NewArrays(st)
	default:
		return fmt.Errorf("--store %q: want mem or shm", wf.store)
	}
	tuneGC()
	ctx, stop := signals()
	defer stop()
	if wf.alone > 0 {
		// A worker that outlives its up may write its log to a pipe
		// nobody reads any more: that must not end it (Go's default on
		// SIGPIPE for stderr), only lose the lines.
		signal.Ignore(syscall.SIGPIPE)
	}
	cfg.OnAlone = func() {
		log.Printf("marsfs: worker %s: no scheduler for %v: exiting", *name, wf.alone)
		stop()
	}
	go giveBack(ctx, giveBackEvery)
	err = worker.Run(ctx, cfg)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// logPrefixed logs as marsfs does: "marsfs: " and the message.
func logPrefixed(format string, args ...any) { log.Printf("marsfs: "+format, args...) }

func list(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// schedCluster shows a scheduler's cluster under /cluster.
type schedCluster struct{ s *sched.Scheduler }

func (c schedCluster) Members() string {
	var b strings.Builder
	for _, m := range c.s.Members() {
		fmt.Fprintf(&b, "%s %s %v %v\n", m.Name, m.Gossip, m.Meta.Role, m.State)
	}
	return b.String()
}

func (c schedCluster) Workers() []string {
	var names []string
	for _, w := range c.s.Workers() {
		names = append(names, w.Name)
	}
	return names
}

func (c schedCluster) WorkerStatus(name string) (string, bool) { return c.s.WorkerStatus(name) }

// Dispatched counts the runs of ops the scheduler dispatched (/cluster/metrics).
func (c schedCluster) Dispatched() uint64 { return c.s.Dispatched() }

// What the scheduler did about lost workers, for /cluster/metrics.
func (c schedCluster) WorkersLost() uint64  { return c.s.WorkersLost() }
func (c schedCluster) AdoptedTotal() uint64 { return c.s.AdoptedTotal() }
func (c schedCluster) Recopied() uint64     { return c.s.Recopied() }

// treeAddr is the address the other schedulers reach this one's tree at:
// its TCP listener's, on the gossip address's host when it listens on
// every address; "" without a TCP listener.
func treeAddr(ls []net.Listener, gossip string) string {
	for _, l := range ls {
		a, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			continue
		}
		if a.IP.IsUnspecified() {
			host, _, err := net.SplitHostPort(gossip)
			if err != nil || host == "" || net.ParseIP(host) == nil || net.ParseIP(host).IsUnspecified() {
				return "" // nowhere the others are sure to reach
			}
			return net.JoinHostPort(host, strconv.Itoa(a.Port))
		}
		return a.String()
	}
	return ""
}

// schedPeers shows a scheduler's tree the other schedulers of its
// cluster: the live ones that serve a tree over TCP, on a ring.
type schedPeers struct{ s *sched.Scheduler }

func (p schedPeers) Self() string { return p.s.Name() }

// live returns the 9P addresses of the live schedulers, this one's
// included.
func (p schedPeers) live() map[string]string {
	out := map[string]string{}
	for _, m := range p.s.Members() {
		if m.Meta.Role == cluster.RoleScheduler && m.State == cluster.Alive && m.Meta.Addr != "" {
			out[m.Name] = m.Meta.Addr
		}
	}
	return out
}

func (p schedPeers) Home(n int) string {
	live := p.live()
	names := []string{p.Self()}
	for name := range live {
		names = append(names, name)
	}
	return ring.New(names).Home(uint64(n))
}

func (p schedPeers) Addrs() map[string]string {
	live := p.live()
	delete(live, p.Self())
	return live
}

// processMetrics adds to /cluster/metrics what this process counts itself:
// the workers up started again (kids; nil for a lone scheduler) and the
// failed schedulers taken over (state's replicator; none without
// --state-dir).
func processMetrics(kids *children, state *stateDir) func() []prom.Family {
	return func() []prom.Family {
		var fams []prom.Family
		if kids != nil {
			f := prom.Family{Name: "marsfs_up_worker_restarts_total", Type: prom.Counter, Help: "Local workers up started again after they died (--respawn)."}
			f.Add(float64(kids.restarts.Load()))
			fams = append(fams, f)
		}
		if state != nil && state.rep != nil {
			t := prom.Family{Name: "marsfs_scheduler_takeovers_total", Type: prom.Counter, Help: "Schedulers declared failed whose sessions this one took over from its replica of their journal."}
			t.Add(float64(state.rep.takeovers.Load()))
			s := prom.Family{Name: "marsfs_scheduler_taken_sessions_total", Type: prom.Counter, Help: "Sessions restored by those takeovers."}
			s.Add(float64(state.rep.takenSessions.Load()))
			fams = append(fams, t, s)
		}
		return fams
	}
}
