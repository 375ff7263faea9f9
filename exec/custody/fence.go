package custody

// A Fence is what a worker knows of sessions' epochs: the latest epoch it
// accepted for each, and at which home. A witness accepts a change from
// epoch base to epoch e only when it holds no epoch after base (or the
// same e asked again by the same home): of two schedulers moving on from
// the same epoch at most one gets a majority, and a scheduler that holds
// an old epoch (back from a pause) cannot leap over a later one. Every worker refuses claims, frees and
// submissions that carry an epoch below the one it knows. It is pure:
// the worker steps it under its lock.
type Fence struct {
	at map[int]fenced
}

type fenced struct {
	epoch Epoch
	home  string
}

// Accept asks the fence to accept session sess moving on from epoch base
// to epoch e on home. It answers whether it did, and the epoch and home
// it holds.
func (f *Fence) Accept(sess int, base, e Epoch, home string) (ok bool, cur Epoch, curHome string) {
	if f.at == nil {
		f.at = map[int]fenced{}
	}
	c, had := f.at[sess]
	if !had || (c.epoch <= base && e > base) || (e == c.epoch && home == c.home) {
		f.at[sess] = fenced{e, home}
		return true, e, home
	}
	return false, c.epoch, c.home
}

// Allow reports whether a claim, free or submission of session sess at
// epoch e may be carried out; a later epoch is learned.
func (f *Fence) Allow(sess int, e Epoch, home string) (ok bool, cur Epoch, curHome string) {
	if f.at == nil {
		f.at = map[int]fenced{}
	}
	c, had := f.at[sess]
	if !had || e > c.epoch {
		f.at[sess] = fenced{e, home}
		return true, e, home
	}
	if e == c.epoch {
		return home == c.home, c.epoch, c.home
	}
	return false, c.epoch, c.home
}
