package worker

// Changed returns a channel closed at the next change of the worker's
// state: a task queued, started, ended, refused or cancelled, a chunk kept,
// freed, orphaned or adopted. Take it, check the state (Status, the
// store's Len), then wait on it: no change between the two is missed. A
// caller waiting for the worker to reach a state waits on this, not on a
// clock.
func (w *Worker) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed == nil {
		w.changed = make(chan struct{})
	}
	return w.changed
}

// wake closes the channel Changed gave, if any caller took one. w.mu is
// held. It costs a nil check when nobody waits, as on a worker's hot path.
func (w *Worker) wake() {
	if w.changed != nil {
		close(w.changed)
		w.changed = nil
	}
}
