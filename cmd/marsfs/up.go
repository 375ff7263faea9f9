package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	"marsfs/exec/asuser"
	"marsfs/exec/engine"
	"marsfs/exec/sched"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/fs"
	"marsfs/fs/fusefs"
	"marsfs/fs/prom"
	"marsfs/shm"
)

// defaultSocket is the unix socket up and scheduler listen on by default.
func defaultSocket() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "marsfs.sock")
	}
	return fmt.Sprintf("/tmp/marsfs-%d.sock", os.Getuid())
}

// serveFlags are the flags of the commands that serve the tree.
type serveFlags struct {
	listenAddr string
	socket     string
	idle       time.Duration
	mount      string
	ops        int
	history    int                  // --graph-history
	dataDir    string               // --data-dir; up's default is its working directory
	workerWait time.Duration        // --worker-wait: sched.Config.NoWorkerWait
	key        []byte               // the cluster key (--key-file, $MARSFS_KEY): lets --listen leave loopback
	peers      fs.Peers             // the other schedulers, when there is a cluster
	stateDir   string               // --state-dir: the journal of the sessions
	metrics    func() []prom.Family // the process's own counters (processMetrics)
}

func (s *serveFlags) add(f *flag.FlagSet) {
	f.StringVar(&s.listenAddr, "listen", DefaultAddr, "9P TCP address (empty for none); beyond loopback only with the cluster key (--key-file or $MARSFS_KEY), which its clients must prove over TLS")
	f.StringVar(&s.socket, "socket", defaultSocket(), "9P unix socket path (empty for none)")
	f.DurationVar(&s.idle, "idle", 24*time.Hour, "close sessions unused for this long (0: never)")
	f.StringVar(&s.mount, "mount", "", "also mount the tree on this directory with FUSE")
	ops, help := defaultOps()
	f.DurationVar(&s.workerWait, "worker-wait", 30*time.Second, "how long a graph waits with no worker connected (all died or left) before it fails saying so")
	f.StringVar(&s.stateDir, "state-dir", "", "keep a journal of the sessions in this directory: a scheduler started again on it brings them back (default none: nothing is kept)")
	f.IntVar(&s.ops, "ops", ops, "chunk operands the graphs of all sessions hold at once; a spec that would pass it is refused (0: no bound); "+help)
	f.IntVar(&s.history, "graph-history", engine.DefaultHistory, "ended graphs a session keeps whole (plan, operands, events, timeline); older ones keep a summary, and those kept whole by all sessions hold at most --ops operands (-1: keep all)")
}

// schedulerShare is the memory the scheduler's process counts on: an
// eighth of what the host grants, what the workers' defaults leave it
// (see defaultsFor); 0 when the host's memory is not known.
func schedulerShare() int64 {
	host, err := shm.HostMemory()
	if err != nil {
		return 0
	}
	return host / 8
}

// defaultOps is the default of --ops: the scheduler's share of memory at
// engine.OpCost an operand.
func defaultOps() (int, string) {
	share := schedulerShare()
	if share == 0 {
		return 0, "no bound here: the host's memory is not known"
	}
	n := int(share / engine.OpCost)
	return n, fmt.Sprintf("%d here: an eighth of the memory (%s) at %d B an operand", n, formatSize(share*8), engine.OpCost)
}

// boundServerMemory fits the scheduler's process to its share of memory:
// a quarter of the share for the 9P connections' buffers, and a soft
// limit on the heap (twice the share, unless GOMEMLIMIT is set) under
// which the collector works harder rather than let garbage grow.
func boundServerMemory() (connMemory int64) {
	share := schedulerShare()
	if share == 0 {
		return 0
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(2 * share)
	}
	return share / 4
}

// listen opens the flags' listeners, before anything else starts, so that
// a busy address fails at once.
func (sf *serveFlags) listen() ([]net.Listener, error) {
	var ls []net.Listener
	for _, addr := range []string{sf.listenAddr, sf.socket} {
		if addr == "" {
			continue
		}
		if _, ok := fs.SocketPath(addr); !ok && addr == sf.socket {
			addr = "unix:" + addr // a relative socket path
		}
		l, err := fs.ListenKey(addr, sf.key)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, err
		}
		ls = append(ls, l)
	}
	if len(ls) == 0 {
		return nil, errors.New("nothing to listen on: give --listen or --socket")
	}
	return ls, nil
}

// serve serves eng's tree on ls until ctx is done, and prints where; with
// --mount, it also mounts the tree, and unmounts it first when it stops.
// It returns once the server has stopped, the listeners closed.
func serve(ctx context.Context, eng *engine.Engine, cl fs.Cluster, ls []net.Listener, sf *serveFlags) error {
	eng.SetMaxOps(sf.ops)
	eng.SetHistory(sf.history)
	if sf.dataDir != "" {
		data, err := openData(sf.dataDir)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return err
		}
		defer data.Close()
		// Files are opened as each session's owner; the identities that
		// are no user of this host open none.
		files, err := asuser.New(data, fs.KeyIdentity, fs.TCPIdentity)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return err
		}
		eng.SetData(files)
		fmt.Printf("marsfs: data directory %s\n", sf.dataDir)
	}
	srv := fs.NewServer(eng, fs.Config{Cluster: cl, IdleTimeout: sf.idle, ConnMemory: boundServerMemory(), Key: sf.key, Peers: sf.peers, Metrics: sf.metrics})
	var wg sync.WaitGroup
	errc := make(chan error, len(ls))
	for _, l := range ls {
		a := l.Addr().String()
		if l.Addr().Network() == "unix" {
			a = "unix:" + a
		}
		fmt.Printf("marsfs: serving 9P2000.L at %s\n", a)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Serve(l); err != nil {
				errc <- err
			}
		}()
	}
	var m *fusefs.Mount
	if sf.mount != "" {
		var err error
		if m, err = mountOn(sf.mount, ls); err != nil {
			srv.Close()
			wg.Wait()
			return err
		}
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	if m != nil {
		// Unmount first: the mount is a client of the server.
		if uerr := m.Unmount(); uerr != nil {
			log.Printf("marsfs: unmount %s: %v", m.Dir(), uerr)
		}
	}
	srv.Close() // closing a unix listener removes its socket file
	wg.Wait()
	return err
}

// signals returns a context that ends at SIGINT or SIGTERM.
func signals() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// up runs the embedded default: scheduler, 9P server and local workers.
func up(args []string) error {
	f := flag.NewFlagSet("up", flag.ContinueOnError)
	var sf serveFlags
	sf.add(f)
	var wf workerFlags
	wf.add(f, 2)
	workers := f.Int("workers", 2, "number of local worker processes (0: run in this process)")
	gossip := f.String("gossip", "127.0.0.1:0", "the scheduler's memberlist address")
	respawn := f.Bool("respawn", true, "start a worker process again when it dies (after 0.5s, doubling to 8s while it keeps dying)")
	f.StringVar(&sf.dataDir, "data-dir", "", "the directory the files specs name are in, and that its workers read and write (default the working directory)")
	var err error
	if _, err = parse(f, args); err != nil {
		return err
	}
	if sf.dataDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		sf.dataDir = wd
	}
	wf.dataDir = sf.dataDir
	if sf.key, err = wire.LoadKey(wf.keyFile); err != nil {
		return err
	}
	if *workers < 0 {
		return fmt.Errorf("--workers %d: want 0 or more", *workers)
	}
	stopProfile, err := cpuProfile(wf.cpuprofile)
	if err != nil {
		return err
	}
	defer stopProfile()
	ls, err := sf.listen()
	if err != nil {
		return err
	}
	ctx, stop := signals()
	defer stop()
	if *workers == 0 {
		data, err := openData(sf.dataDir)
		if err != nil {
			return err
		}
		defer data.Close()
		run := sched.NewLocalWith(worker.Config{Slots: wf.slots, Data: data})
		eng := engine.New(run)
		defer eng.Close()
		return serve(ctx, eng, localCluster{run}, ls, &sf)
	}
	return upCluster(ctx, ls, &sf, &wf, *workers, *gossip, *respawn)
}

// workerFlags are the flags of a worker, which up passes on.
type workerFlags struct {
	slots    int
	procs    int
	mem      int64
	shm      int64
	shmDir   string
	spillDir string
	store    string
	keyFile  string
	dataDir  string // worker's --data-dir; up passes its own
	orphan   time.Duration
	alone    time.Duration // --alone-exit: up's workers that outlive it

	cpuprofile string // up passes each worker FILE.worker-N
}

// add defines the flags on f. share is the number of workers that share
// the host's memory by default (up's default --workers; 1 for a worker),
// for the help to show the default --shm resolves to here.
func (w *workerFlags) add(f *flag.FlagSet, share int) {
	f.IntVar(&w.slots, "slots", 0, "operands a worker runs at once (0: the number of CPUs, "+strconv.Itoa(runtime.NumCPU())+" here)")
	f.IntVar(&w.procs, "procs", 0, "CPUs a worker's Go code runs on at once, GOMAXPROCS (0: all)")
	shmHelp, memHelp := "half the memory", "three quarters of what the shared memory leaves"
	if d, err := defaultsFor(share, ""); err == nil {
		shmHelp, memHelp = d.describe(share)
	}
	w.mem, w.shm = -1, -1 // not set: the defaults, resolved when the worker starts
	f.Var(sizeFlag{&w.mem, true}, "mem", "the `size` of a worker's memory quota, in bytes or with a unit (64M, 2GiB, 500MB): an operand runs only when its inputs and output fit beside the others' (default "+memHelp+"; \"none\" for no bound)")
	f.Var(sizeFlag{p: &w.shm}, "shm", "the `size` of a worker's shared memory, in bytes or with a unit (default "+shmHelp+")")
	f.StringVar(&w.shmDir, "shm-dir", "", "directory of shared-memory chunk files (default /dev/shm)")
	f.StringVar(&w.spillDir, "spill-dir", "", "directory chunks spill to when shared memory runs short")
	f.StringVar(&w.store, "store", "shm", "where a worker keeps chunks: shm (shared memory, spilling to --spill-dir) or mem (its heap)")
	f.StringVar(&w.keyFile, "key-file", "", "file holding the cluster's shared secret (default $MARSFS_KEY); required beyond loopback")
	f.DurationVar(&w.alone, "alone-exit", 0, "with no scheduler connected for this long, the worker exits (0: never); up --state-dir sets it on its workers, which outlive it")
	f.DurationVar(&w.orphan, "orphan-grace", worker.DefaultOrphanGrace, "how long a worker keeps the chunks of a scheduler whose connection broke, for it to come back and take them, before it frees them")
	f.StringVar(&w.cpuprofile, "cpuprofile", "", "write a CPU profile to this file (up: its workers' to FILE.worker-N)")
}

// args renders the flags for a worker's command line.
// resolve sets the sizes not given to their defaults for workers workers
// sharing this host.
func (w *workerFlags) resolve(workers int) error {
	if w.mem >= 0 && w.shm >= 0 {
		return nil
	}
	d, err := defaultsFor(workers, w.shmDir)
	if err != nil {
		return err
	}
	if w.shm < 0 {
		w.shm = d.shm
	}
	if w.mem < 0 {
		w.mem = d.mem
	}
	return nil
}

func (w *workerFlags) args() []string {
	a := []string{"--slots", strconv.Itoa(w.slots), "--procs", strconv.Itoa(w.procs), "--mem", strconv.FormatInt(w.mem, 10), "--shm", strconv.FormatInt(w.shm, 10), "--store", w.store}
	if w.shmDir != "" {
		a = append(a, "--shm-dir", w.shmDir)
	}
	if w.spillDir != "" {
		a = append(a, "--spill-dir", w.spillDir)
	}
	if w.keyFile != "" {
		a = append(a, "--key-file", w.keyFile)
	}
	if w.dataDir != "" {
		a = append(a, "--data-dir", w.dataDir)
	}
	a = append(a, "--orphan-grace", w.orphan.String())
	return a
}

// openData opens the data directory dir for the files specs name: as an
// os.Root, so that no path, nor a symbolic link, leads out of it.
func openData(dir string) (*os.Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	return root, nil
}

// cpuProfile starts a CPU profile written to path, if not empty, and
// returns the function that ends it.
func cpuProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// localCluster shows the scheduler of `up --workers 0` and its one
// in-process worker as the one member and worker.
type localCluster struct{ run *sched.Scheduler }

func (l localCluster) Members() string   { return sched.LocalWorker + " - scheduler,worker alive\n" }
func (l localCluster) Workers() []string { return []string{sched.LocalWorker} }
func (l localCluster) WorkerStatus(name string) (string, bool) {
	return l.run.WorkerStatus(name)
}
func (l localCluster) Dispatched() uint64 { return l.run.Dispatched() }
