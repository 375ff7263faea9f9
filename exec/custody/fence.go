package custody

// A Fence is what a worker knows of sessions' epochs. It runs in each
// worker, which steps it under its lock; it is pure.
//
// As a witness it votes: it accepts a session moving on from epoch base
// to epoch e at a home only when it has voted for no transition out of
// base or a later epoch (or votes again for the same one), and knows of
// no epoch after base. A vote is final, so of two schedulers moving on
// from the same epoch at most one gets a majority of the witnesses, and
// a scheduler holding an old epoch (back from a pause) cannot leap over
// a later one: the majority that granted the later epoch refuses it. Two
// contenders that split the votes with the third witness dead leave the
// session with no next epoch: safety is chosen over progress.
//
// Apart from votes it knows the epoch each session's home holds, learned
// from the claims, frees and submissions it is sent, and refuses those
// that carry an older epoch, or the same epoch from another home.
type Fence struct {
	votes map[int]vote
	known map[int]fenced
}

type vote struct {
	base, epoch Epoch
	home        string
}

type fenced struct {
	epoch Epoch
	home  string
}

// Accept asks the witness to vote for session sess moving on from epoch
// base to epoch e on home. It answers whether it did; otherwise the epoch
// and home that stand in the way, and whether that epoch is decided (held
// by a home) rather than voted for.
func (f *Fence) Accept(sess int, base, e Epoch, home string) (ok bool, cur Epoch, curHome string, decided bool) {
	if f.votes == nil {
		f.votes, f.known = map[int]vote{}, map[int]fenced{}
	}
	v, voted := f.votes[sess]
	k := f.known[sess]
	switch {
	case k.epoch > base:
		return false, k.epoch, k.home, true
	case voted && v.epoch > base && (v.epoch != e || v.home != home):
		return false, v.epoch, v.home, false
	case e <= base:
		return false, base, "", false
	}
	f.votes[sess] = vote{base, e, home}
	return true, e, home, false
}

// Allow reports whether a claim, free or submission of session sess at
// epoch e from home may be carried out; a later epoch is learned.
func (f *Fence) Allow(sess int, e Epoch, home string) (ok bool, cur Epoch, curHome string) {
	if f.votes == nil {
		f.votes, f.known = map[int]vote{}, map[int]fenced{}
	}
	k, had := f.known[sess]
	if !had || e > k.epoch {
		f.known[sess] = fenced{e, home}
		return true, e, home
	}
	if e == k.epoch && home == k.home {
		return true, e, home
	}
	return false, k.epoch, k.home
}
