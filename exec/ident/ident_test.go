package ident

import (
	"math/rand/v2"
	"testing"
)

func TestSpacesDoNotOverlap(t *testing.T) {
	a, b := Space(0), Space(381)
	if a.FirstID()+1 != 1 || a.FirstSession()+1 != 1 {
		t.Errorf("space 0 starts at ID %d, session %d; want 1 and 1 as a lone scheduler", a.FirstID()+1, a.FirstSession()+1)
	}
	lastA := b.FirstID() - 1 // the last ID space 380 could hand out
	if Of(lastA) != 380 || Of(b.FirstID()+1) != 381 {
		t.Errorf("Of(%#x) = %v, Of(%#x) = %v", lastA, Of(lastA), b.FirstID()+1, Of(b.FirstID()+1))
	}
	if got := SessionSpace(b.FirstSession() + 1); got != b {
		t.Errorf("SessionSpace(%d) = %v, want %v", b.FirstSession()+1, got, b)
	}
	if got := SessionSpace(b.FirstSession() + SessionsPerSpace); got != b {
		t.Errorf("last session of %v is in %v", b, got)
	}
	if Of(Space(Spaces-1).FirstID()+1) != Spaces-1 {
		t.Errorf("the highest space does not round-trip")
	}
}

func TestPickAvoidsTakenAndZero(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	draws := []uint32{0, Spaces, 7, 9} // 0, 0 again (mod Spaces), taken, free
	i := 0
	s, err := Pick(func(s Space) bool { return s == 7 }, func() uint32 { i++; return draws[i-1] })
	if err != nil || s != 9 {
		t.Fatalf("Pick = %v, %v; want 9", s, err)
	}
	if _, err := Pick(func(Space) bool { return true }, r.Uint32); err == nil {
		t.Fatal("Pick in a full cluster did not fail")
	}
}

func TestStartStaysInTheSpace(t *testing.T) {
	for _, r := range []uint64{0, 1, 1<<64 - 1} {
		s := Space(5)
		st := s.Start(func() uint64 { return r })
		if Of(st+1) != s || Of(st+1<<43) != s {
			t.Errorf("start %#x for draw %#x leaves space %v", st, r, s)
		}
	}
}
