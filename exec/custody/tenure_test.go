package custody

import (
	"fmt"
	"testing"
)

// TestTenure walks a scheduler's tenure through what cmd/marsfs's fence
// tells it: renewals and their grants, a pause past the lease, a failed
// peer's takeover waiting the last grant out, sessions held at epochs
// weighed against a renewal's, a restart counting the answers.
func TestTenure(t *testing.T) {
	const term = 2000
	held := func(int) bool { return true }

	a := NewTenure(term)
	if a.Holds(0) {
		t.Fatal("a lease before any grant")
	}
	n1, ok := a.Renew(100, term/8)
	if !ok {
		t.Fatal("the first renewal not sent")
	}
	if _, again := a.Renew(150, term/8); again {
		t.Error("a second renewal 50 ns after the first: many waiting requests ask once")
	}
	// A grant from another than the successor, or a refusal, extends
	// nothing; the successor's grant extends the lease a term from the
	// renewal's send, not from the answer.
	if a.Answered("other", n1, true, false) || a.Answered("succ", n1, false, true) || a.Holds(200) {
		t.Error("the lease extended by a grant from another than the successor, or by a refusal")
	}
	if !a.Answered("succ", n1, true, true) || a.Until() != 100+term {
		t.Fatalf("the successor's grant: lease until %d, want %d", a.Until(), 100+term)
	}
	if !a.Holds(100+term-1) || a.Holds(100+term) {
		t.Error("the lease does not end a term after the renewal's send")
	}

	// Paused past the lease: a renewal sent before the pause, answered
	// after it (the answer held in the socket), extends nothing already
	// past, and one older than a term is forgotten.
	n2, _ := a.Renew(1000, term/8)
	n3, _ := a.Renew(1000+term+1, term/8) // back from the pause: n2 is forgotten
	if a.Answered("succ", n2, true, true) {
		t.Error("an answer to a renewal sent a term ago extended the lease")
	}
	if a.Holds(1000 + term + 2) {
		t.Error("the lease holds after a pause before the new renewal is granted")
	}
	a.Answered("succ", n3, true, true)
	if !a.Holds(1000 + term + 2) {
		t.Error("the renewal after the pause, granted, does not hold")
	}

	// The successor's side: grants are refused while a takeover is
	// pending; the last grant to a scheduler bounds its takeover.
	b := NewTenure(term)
	if ok, _, _ := b.Grant("a", nil, held, true, 500); !ok || b.GrantLapses("a") != 500+term {
		t.Fatalf("grant to a: lapses at %d, want %d", b.GrantLapses("a"), 500+term)
	}
	if b.Grant("c", nil, held, false, 600); b.GrantLapses("c") != 0 {
		t.Error("a grant to a scheduler this one is not the successor of is counted")
	}
	b.Failed("a")
	if ok, _, _ := b.Grant("c", nil, held, true, 700); ok {
		t.Error("a grant given while a takeover is pending")
	}
	b.Done("a")
	if ok, _, _ := b.Grant("c", nil, held, true, 800); !ok {
		t.Error("no grant once the takeover is done")
	}

	// Sessions weighed: b holds 1 at epoch 2 and 2 at epoch 0; a asks
	// for 1 at epoch 1 (a is stale: moved) and 2 at epoch 1 (b is
	// stale: it gives 2 up); 3 is not held here.
	b.Hold(1, 2)
	_, moved, stale := b.Grant("a", []Session{{Session: 1, Epoch: 1}, {Session: 2, Epoch: 1}, {Session: 3, Epoch: 9}},
		func(id int) bool { return id != 3 }, true, 900)
	if fmt.Sprint(moved) != "[{1 2 }]" || fmt.Sprint(stale) != "[{2 1 a}]" {
		t.Fatalf("weighed: moved %v, stale %v", moved, stale)
	}
	if gone := b.GiveUp(stale, held); len(gone) != 1 {
		t.Fatalf("gave up %v, want session 2", gone)
	}
	if m, gone := b.Moved(2); !gone || m.Home != "a" || m.Epoch != 1 {
		t.Errorf("session 2: moved %v %v", m, gone)
	}
	if gone := b.GiveUp([]Session{{Session: 1, Epoch: 2, Home: "a"}, {Session: 2, Epoch: 5, Home: "a"}}, held); len(gone) != 0 {
		t.Errorf("gave up %v: session 1 at its own epoch, session 2 twice", gone)
	}
	// A given up session asked for again is not weighed.
	if _, moved, stale := b.Grant("a", []Session{{Session: 2, Epoch: 0}}, held, true, 950); moved != nil || stale != nil {
		t.Errorf("a session given up weighed: %v %v", moved, stale)
	}
	// Taken over again, it is held.
	b.Hold(2, 3)
	if e, gone := b.EpochOf(2); gone || e != 3 {
		t.Errorf("session 2 held again: epoch %d, gone %v", e, gone)
	}

	// Alone: never with a peer, or with most of the workers.
	c := NewTenure(term)
	if !c.Alone(0, false) {
		t.Error("a scheduler that never had a peer is not alone")
	}
	if c.Alone(1, true) || c.Alone(0, false) || !c.Alone(0, true) {
		t.Error("a scheduler that had a peer is alone only with the workers' quorum")
	}

	// A restart counts the grants of every live scheduler.
	c.Restarting(true)
	c.Answered("x", c.Ask(), true, false)
	if c.AllAnswered([]string{"x", "y"}) || !c.AllAnswered([]string{"x"}) {
		t.Error("the restart's answers miscounted")
	}
	c.Restarting(false)
}
