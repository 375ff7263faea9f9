package shm

import (
	"slices"
	"testing"
)

func TestChooseVictims(t *testing.T) {
	cands := []Candidate{
		{ID: 1, Size: 100, NextUse: 5, LastUse: 1},
		{ID: 2, Size: 100, NextUse: 50, LastUse: 9},
		{ID: 3, Size: 100, NextUse: NoNextUse, LastUse: 10},
		{ID: 4, Size: 300, NextUse: 50, LastUse: 9},
		{ID: 5, Size: 100, NextUse: 50, LastUse: 2},
		{ID: 6, Size: 500, NextUse: NoNextUse, LastUse: 1, Pinned: true},
	}
	for _, c := range []struct {
		name string
		need int64
		want []uint64
		ok   bool
	}{
		{"nothing needed", 0, nil, true},
		{"no known use first", 1, []uint64{3}, true},
		{"then latest next use, least recent first", 150, []uint64{3, 5}, true},
		{"equal rank and recency: larger first", 450, []uint64{3, 5, 4}, true},
		{"soonest needed last among unpinned", 700, []uint64{3, 5, 4, 2, 1}, true},
		{"pinned only as a last resort", 800, []uint64{3, 5, 4, 2, 1, 6}, true},
		{"cannot free enough", 5000, []uint64{3, 5, 4, 2, 1, 6}, false},
	} {
		got, ok := ChooseVictims(cands, c.need)
		if !slices.Equal(got, c.want) || ok != c.ok {
			t.Errorf("%s: ChooseVictims(need %d) = %v, %v; want %v, %v", c.name, c.need, got, ok, c.want, c.ok)
		}
	}
	if got, ok := ChooseVictims(nil, 1); got != nil || ok {
		t.Errorf("no candidates: %v, %v", got, ok)
	}
}

// TestChooseVictimsProperties checks on generated inputs that the victims
// free what is needed without a superfluous one, and that no unpinned
// candidate left behind has a later next use than an unpinned victim.
func TestChooseVictimsProperties(t *testing.T) {
	rng := uint64(1)
	next := func(n uint64) uint64 {
		rng = rng*6364136223846793005 + 1442695040888963407
		return (rng >> 33) % n
	}
	for iter := 0; iter < 500; iter++ {
		var cands []Candidate
		var total int64
		for i := range int(next(20)) {
			c := Candidate{ID: uint64(i), Size: int64(next(1000) + 1), Pinned: next(4) == 0,
				NextUse: int64(next(10)), LastUse: next(10)}
			if next(5) == 0 {
				c.NextUse = NoNextUse
			}
			cands = append(cands, c)
			total += c.Size
		}
		need := int64(next(uint64(total) + 100))
		victims, ok := ChooseVictims(cands, need)
		byID := map[uint64]Candidate{}
		for _, c := range cands {
			byID[c.ID] = c
		}
		var freed, beforeLast int64
		chosen := map[uint64]bool{}
		for i, id := range victims {
			if i == len(victims)-1 {
				beforeLast = freed
			}
			freed += byID[id].Size
			chosen[id] = true
		}
		if ok != (freed >= need) || (!ok && len(victims) != len(cands)) {
			t.Fatalf("need %d: freed %d, ok %v, %d of %d chosen", need, freed, ok, len(victims), len(cands))
		}
		if need > 0 && len(victims) > 0 && beforeLast >= need {
			t.Fatalf("need %d: a superfluous victim (freed %d before the last)", need, beforeLast)
		}
		for _, v := range victims {
			for _, c := range cands {
				if !chosen[c.ID] && !c.Pinned && !byID[v].Pinned && c.NextUse > byID[v].NextUse {
					t.Fatalf("kept %+v, needed later than victim %+v", c, byID[v])
				}
				if !chosen[c.ID] && !c.Pinned && byID[v].Pinned {
					t.Fatalf("spilled pinned %+v before unpinned %+v", byID[v], c)
				}
			}
		}
	}
}
