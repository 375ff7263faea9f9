package sched

// Dispatched is the number of runs of ops the scheduler has sent to
// workers since it started, all jobs together: a counter, whose rate is
// the dispatch rate (/cluster/metrics).
func (s *Scheduler) Dispatched() uint64 { return s.dispatched.Load() }
