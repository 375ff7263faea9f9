package main

import (
	"fmt"
	"log"
	"os"
	osexec "os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// children are the worker processes of up, each watched by a supervisor
// goroutine that starts it again when it dies, unless up is stopping.
//
// A worker started again joins under a new name (worker-1, then
// worker-1.2, worker-1.3, ...): it holds none of the chunks of the one
// that died, and memberlist would refuse the old name at a new address
// until its failure detector has declared the dead one gone (seconds).
type children struct {
	path     string       // the marsfs binary
	respawn  bool         // start dead workers again
	announce func(string) // tells the running graphs (sched.Scheduler.Announce); may be nil
	// survive: the workers outlive up (--state-dir): no Pdeathsig, so that
	// an up started again on the state dir takes them and their chunks
	// back; they exit by themselves after --alone-exit with no scheduler.
	survive bool
	// adopted are the workers of an up before this one, taken back: not
	// supervised, but stopped with the others.
	adopted []*os.Process

	restarts atomic.Uint64 // workers started again after they died

	mu       sync.Mutex
	kids     []*child
	stopping bool
	quit     chan struct{} // closed by stop
}

// A child is one worker slot of up: the process running it now.
type child struct {
	name string   // the slot's first name, worker-N
	args []string // the flags after --name
	proc *os.Process
	done chan struct{} // closed when the supervisor has ended
}

// Restarts back off: the first comes restartMin after the death, each
// next one twice as late, up to restartMax, and back to restartMin once a
// worker has lived stableAfter.
const (
	restartMin  = 500 * time.Millisecond
	restartMax  = 8 * time.Second
	stableAfter = time.Minute
)

// start starts the worker process called name with args and supervises it.
// The process gets SIGTERM if this process dies (Pdeathsig) and lives in
// its own process group, so that a terminal's Ctrl-C reaches only up,
// which then stops the workers in order.
func (c *children) start(name string, args []string) error {
	c.mu.Lock()
	if c.quit == nil {
		c.quit = make(chan struct{})
	}
	c.mu.Unlock()
	k := &child{name: name, args: args, done: make(chan struct{})}
	cmd, err := c.spawn(k, name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.kids = append(c.kids, k)
	c.mu.Unlock()
	go c.supervise(k, cmd)
	return nil
}

// spawn starts k's process under name.
func (c *children) spawn(k *child, name string) (*osexec.Cmd, error) {
	cmd := osexec.Command(c.path, append([]string{"worker", "--name", name}, k.args...)...)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if c.survive {
		cmd.SysProcAttr.Pdeathsig = 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return nil, fmt.Errorf("start worker %s: up is stopping", name)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %s: %w", name, err)
	}
	k.proc = cmd.Process
	return cmd, nil
}

// supervise waits for k's process to exit and, unless up is stopping,
// starts it again after a backoff, until up stops.
func (c *children) supervise(k *child, cmd *osexec.Cmd) {
	defer close(k.done)
	wait := restartMin
	for incarnation := 2; ; incarnation++ {
		name := cmd.Args[3] // marsfs worker --name NAME ...
		began := time.Now()
		err := cmd.Wait()
		if c.isStopping() {
			return
		}
		if !c.respawn {
			log.Printf("marsfs: worker %s (pid %d) exited: %v", name, cmd.Process.Pid, err)
			return
		}
		if time.Since(began) >= stableAfter {
			wait = restartMin
		}
		next := fmt.Sprintf("%s.%d", k.name, incarnation)
		msg := fmt.Sprintf("worker %s (pid %d) exited: %v; up starts %s in its place in %v", name, cmd.Process.Pid, err, next, wait)
		log.Printf("marsfs: %s", msg)
		if c.announce != nil {
			c.announce(msg)
		}
		select {
		case <-c.quit:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, restartMax)
		for {
			if cmd, err = c.spawn(k, next); err == nil {
				break
			}
			if c.isStopping() {
				return
			}
			log.Printf("marsfs: %v; trying again in %v", err, wait)
			select {
			case <-c.quit:
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, restartMax)
		}
		c.restarts.Add(1)
		log.Printf("marsfs: started worker %s (pid %d)", next, cmd.Process.Pid)
	}
}

func (c *children) isStopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}

// stop sends SIGTERM to every child, waits up to grace for them to exit,
// then kills those left.
func (c *children) stop(grace time.Duration) {
	c.mu.Lock()
	if c.stopping {
		c.mu.Unlock()
		return
	}
	c.stopping = true
	if c.quit != nil {
		close(c.quit)
	}
	kids := append([]*child(nil), c.kids...)
	for _, k := range kids {
		k.proc.Signal(syscall.SIGTERM)
	}
	adopted := c.adopted
	for _, p := range adopted {
		p.Signal(syscall.SIGTERM)
	}
	c.mu.Unlock()
	deadline := time.After(grace)
	until := time.Now().Add(grace)
	for _, p := range adopted {
		waitGone(p, until, grace)
	}
	for _, k := range kids {
		select {
		case <-k.done:
		case <-deadline:
			c.mu.Lock()
			p := k.proc
			c.mu.Unlock()
			log.Printf("marsfs: worker %d did not stop in %v; killing it", p.Pid, grace)
			p.Kill()
			<-k.done
		}
	}
}

// waitGone waits for p, a process not our child, to be gone (signal 0
// fails), and kills it at deadline.
func waitGone(p *os.Process, until time.Time, grace time.Duration) {
	for p.Signal(syscall.Signal(0)) == nil {
		if time.Now().After(until) {
			log.Printf("marsfs: worker %d did not stop in %v; killing it", p.Pid, grace)
			p.Kill()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
