package sched

// Dispatched is the number of runs of ops the scheduler has sent to
// workers since it started, all jobs together: a counter, whose rate is
// the dispatch rate (/cluster/metrics).
func (s *Scheduler) Dispatched() uint64 { return s.dispatched.Load() }

// WorkersLost is the number of connected workers the scheduler has
// dropped since it started: dead, declared failed, or gone (a counter).
func (s *Scheduler) WorkersLost() uint64 { return s.workersLost.Load() }

// Recopied is the number of second copies of uploaded chunks made after
// their upload: for a copy lost with its worker, or where no second worker
// was there at the upload (a counter).
func (s *Scheduler) Recopied() uint64 { return s.recopied.Load() }

// AdoptedTotal is Adopted as a counter's value.
func (s *Scheduler) AdoptedTotal() uint64 { return uint64(s.Adopted()) }
