package core

import (
	"fmt"
)

// This file holds the Core's paths out of the normal run of an operand:
// failures and their retries, cancelling a job, and a worker leaving, whose
// chunks are recomputed from their lineage.

// opFailed records that op k failed on worker with errText. The op is retried
// on another worker if it has attempts left, and is FATAL otherwise.
func (c *Core) opFailed(k int, worker string, attempt int, errText string) Output {
	c.begin()
	if !c.current(k, worker, attempt) {
		return c.end()
	}
	c.settle(k)
	c.fail(k, worker, errText, false)
	return c.end()
}

// maxFetchFailures bounds the runs of an op that fail fetching an input from
// a worker still in the cluster. Such a failure is not counted against
// MaxAttempts: it is most often the peer dying, which the scheduler learns a
// moment later (and then recomputes the input), not the op's fault. The
// bound keeps a peer that is alive but cannot serve from looping forever.
const maxFetchFailures = 16

// opFailedFetch records that op k failed on worker because an input could not
// be fetched from worker peer. While peer is still in the cluster the op is
// retried without counting a failure, up to maxFetchFailures times; once peer
// has left, its loss has been handled and the op waits for its inputs.
func (c *Core) opFailedFetch(k int, worker string, attempt int, peer, errText string) Output {
	c.begin()
	if !c.current(k, worker, attempt) {
		return c.end()
	}
	c.settle(k)
	o := &c.ops[k]
	if _, alive := c.workers[peer]; (!alive || int(o.fetches) < maxFetchFailures) && !c.stopping && (o.state == Ready || o.state == Running) {
		o.fetches++
		c.lastFail[k] = errText
		c.emit(k, Ready, worker, errText)
		return c.end()
	}
	c.fail(k, worker, errText, false)
	return c.end()
}

// opFailedFinal records that op k failed on worker in a way no retry can fix:
// its kernel rejected the op or its inputs (tensor.ErrKernel), and kernels
// are deterministic. The op is FATAL at once.
func (c *Core) opFailedFinal(k int, worker string, attempt int, errText string) Output {
	c.begin()
	if !c.current(k, worker, attempt) {
		return c.end()
	}
	c.settle(k)
	c.fail(k, worker, errText, true)
	return c.end()
}

func (c *Core) fail(k int, worker, errText string, final bool) {
	o := &c.ops[k]
	c.lastFail[k] = errText
	switch o.state {
	case Ready, Running:
		if o.failures++; !final && int(o.failures) < c.opts.MaxAttempts && !c.stopping {
			c.emit(k, Ready, worker, errText)
			return
		}
		c.fatal(k, fmt.Errorf("operand %d (%s) failed on %s after %d %s: %s", k, c.g.Ops[k].Kind, worker, o.failures, plural(int(o.failures), "attempt"), errText))
	case Cancelling:
		c.emit(k, Cancelled, worker, "")
	}
}

// fatal makes op k and its unfinished descendants FATAL and stops the job
// with err.
func (c *Core) fatal(k int, err error) {
	c.emit(k, Fatal, c.wnames[c.ops[k].worker], c.lastFail[k])
	stack := append([]int32(nil), c.successors(k)...)
	for len(stack) > 0 {
		s := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		if st := c.ops[s].state; st == Fatal || st == Finished || st == Freed || st == Cancelled {
			continue
		}
		if so := &c.ops[s]; so.sent {
			if so.state != Unscheduled {
				continue // running: cancelled by stop
			}
			// An op of a unit waiting at its worker for this input: call
			// it back; what the worker reports of it is stale from now.
			c.out.Cancel = append(c.out.Cancel, CancelOp{Key: s, Worker: c.wnames[so.worker], Attempt: int(so.attempt)})
			c.settle(s)
		}
		c.emit(s, Fatal, "", fmt.Sprintf("input operand %d failed", k))
		stack = append(stack, c.successors(int(s))...)
	}
	c.stop(err)
}

// cancelJob stops the job: ops at workers become CANCELLING until the workers
// confirm, the others CANCELLED, and every chunk the job made is freed.
func (c *Core) cancelJob() Output {
	c.begin()
	if !c.done {
		c.stop(ErrCancelled)
	}
	return c.end()
}

func (c *Core) stop(err error) {
	if c.stopping {
		return
	}
	c.stopping, c.err = true, err
	for k := range c.ops {
		o := &c.ops[k]
		switch {
		case o.sent:
			c.emit(k, Cancelling, c.wnames[o.worker], "")
			c.out.Cancel = append(c.out.Cancel, CancelOp{Key: k, Worker: c.wnames[o.worker], Attempt: int(o.attempt)})
		case o.state == Unscheduled || o.state == Ready:
			c.emit(k, Cancelled, "", "")
		case o.state == Finished:
			c.free(k)
		}
	}
}

// opCancelled records that the worker dropped or interrupted op k.
func (c *Core) opCancelled(k int, worker string, attempt int) Output {
	c.begin()
	if c.current(k, worker, attempt) {
		c.settle(k)
		c.fail(k, worker, "cancelled by its worker", false)
	}
	return c.end()
}

// abandonJob stops waiting for the workers to confirm a cancel: ops still
// CANCELLING become CANCELLED. Chunks they may make later are not the
// core's to free.
func (c *Core) abandonJob() Output {
	c.begin()
	if c.stopping {
		for k := range c.ops {
			if o := &c.ops[k]; o.sent && o.state == Cancelling {
				c.settle(k)
				c.emit(k, Cancelled, c.wnames[o.worker], "abandoned")
			}
		}
	}
	return c.end()
}

// workerDown records that a worker left the cluster. The ops it was running
// are retried elsewhere, and the chunks it held that the job still needs are
// recomputed from their lineage: the ops that made them run again, and so
// do the ops of any of their inputs already freed. A lost stored chunk (made
// by an earlier job) cannot be recomputed: the job fails.
func (c *Core) workerDown(name string) Output {
	c.begin()
	if _, ok := c.workers[name]; !ok || c.done {
		return c.end()
	}
	c.removeWorker(name)
	why := "worker " + name + " left"
	var lost, inflight []int
	wi := c.intern(name)
	for k := range c.ops {
		o := &c.ops[k]
		if o.worker != wi {
			continue
		}
		switch {
		case o.sent && o.state == Unscheduled:
			// An op of a unit still waiting for its inputs there: it never
			// ran, so it is sent again later without counting a failure.
			o.sent, o.inUnit = false, false
			c.nsent--
		case o.sent:
			o.sent, o.inUnit = false, false
			c.nsent--
			inflight = append(inflight, k)
		case o.state == Finished:
			if c.g.Ops[k].Stored == 0 {
				c.liveChunks--
				c.hold(name, -o.nbytes)
			}
			o.state = Freed // no Free: the chunk is gone
			lost = append(lost, k)
		}
	}
	if c.stopping {
		for _, k := range lost {
			c.emit(k, Freed, name, "chunk lost when "+why)
		}
		for _, k := range inflight {
			c.fail(k, name, why, false)
		}
		return c.end()
	}
	for _, k := range lost {
		o := &c.ops[k]
		stored := c.g.Ops[k].Stored != 0
		if o.users == 0 && (stored || !c.keep[c.ids[k]]) {
			c.emit(k, Freed, name, "chunk lost when "+why)
			continue
		}
		if stored {
			c.lastFail[k] = "chunk lost when " + why
			c.fatal(k, &storedLost{fmt.Sprintf("worker %s left holding stored chunk %d, which operand %d reads", name, c.g.Ops[k].Stored, k)})
			return c.end()
		}
		if o.state == Freed { // not revived yet as another lost op's input
			if err := c.revive(k, "chunk lost when "+why); err != nil {
				c.fatal(k, err)
				return c.end()
			}
		}
	}
	for _, k := range inflight {
		o := &c.ops[k]
		if o.failures++; int(o.failures) >= c.opts.MaxAttempts {
			c.lastFail[k] = why
			c.fatal(k, fmt.Errorf("operand %d (%s) lost with its worker %d times, last %s", k, c.g.Ops[k].Kind, o.failures, name))
			return c.end()
		}
		if o.state != Unscheduled { // its inputs are all there
			c.emit(k, Ready, name, why)
		}
	}
	return c.end()
}

// revive makes the FREED op k compute its chunk again: its inputs' chunks
// are needed once more (and revived in turn if freed), its unfinished
// successors wait for it again, and it is READY or UNSCHEDULED.
func (c *Core) revive(k int, why string) error {
	o := &c.ops[k]
	if s := c.g.Ops[k].Stored; s != 0 {
		return fmt.Errorf("stored chunk %d is gone", s)
	}
	c.finished--
	o.worker, o.waiting, o.revived = 0, 0, true
	for _, in := range c.g.Ops[k].Inputs {
		i := &c.ops[in]
		i.users++
		if i.state == Freed {
			if err := c.revive(in, "input of operand "+fmt.Sprint(k)); err != nil {
				return err
			}
		}
		if i.state != Finished {
			o.waiting++
		}
	}
	if o.waiting == 0 {
		c.emit(k, Ready, "", why)
	} else {
		c.emit(k, Unscheduled, "", why)
	}
	for _, s32 := range c.successors(k) {
		s := int(s32)
		so := &c.ops[s]
		switch so.state {
		case Unscheduled:
			so.waiting++
		case Ready, Running:
			so.waiting++
			if so.sent {
				// It will not find this input: call it back.
				c.out.Cancel = append(c.out.Cancel, CancelOp{Key: s, Worker: c.wnames[so.worker], Attempt: int(so.attempt)})
				c.settle(s)
			}
			c.emit(s, Unscheduled, "", "input operand "+fmt.Sprint(k)+" is recomputed")
		}
	}
	return nil
}

// adopt takes op k's chunk, which worker holds again (it was lost with
// it, and the worker came back), instead of making it again, if the op
// is to be made again and has not been sent: the op is FINISHED there, as
// if its run had just ended, and what was revived only to make it is let
// go again.
func (c *Core) adopt(k int, worker string, nbytes int64) Output {
	c.begin()
	if k < 0 || k >= len(c.ops) || c.done || c.stopping {
		return c.end()
	}
	o := &c.ops[k]
	// The op is to be made again: its chunk was lost (revived), or its
	// run was lost with the worker (a run before, attempt > 0), which
	// may have made it all the same. Kernels being deterministic, the
	// chunk under its ID is the one a run would make.
	if _, up := c.workers[worker]; !up || o.sent || (o.state != Ready && o.state != Unscheduled) || (!o.revived && o.attempt == 0) {
		return c.end()
	}
	c.unrevive(k)
	o.worker, o.nbytes = c.intern(worker), nbytes
	c.liveChunks++
	c.hold(worker, nbytes)
	c.finish(k, worker)
	if o.users == 0 {
		c.maybeFree(k)
	}
	return c.end()
}

// unrevive undoes what revive did for op k, about to be FINISHED without
// running: its inputs are not needed for it any more, and those that were
// revived for it alone and have not been sent go back to FREED.
func (c *Core) unrevive(k int) {
	c.ops[k].revived = false
	for _, in := range c.g.Ops[k].Inputs {
		i := &c.ops[in]
		if i.users--; i.users > 0 {
			continue
		}
		switch {
		case i.state == Finished:
			c.maybeFree(in)
		case i.revived && !i.sent && (i.state == Ready || i.state == Unscheduled) && !c.keep[c.ids[in]]:
			// (A kept chunk lost is made again for itself.)
			c.unrevive(in)
			c.finished++ // as it was before revive
			c.emit(in, Freed, "", fmt.Sprintf("not made again: operand %d was taken back", k))
		}
	}
}
