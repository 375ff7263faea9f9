package ring

import (
	"fmt"
	"testing"
)

func TestEmptyAndAlone(t *testing.T) {
	if h := New(nil).Home(1); h != "" {
		t.Errorf("empty ring: home %q", h)
	}
	r := New([]string{"a"})
	for k := range uint64(100) {
		if r.Home(k) != "a" {
			t.Fatal("a lone scheduler is not every key's home")
		}
	}
	if s := r.Successor("a"); s != "" {
		t.Errorf("successor of a lone scheduler: %q", s)
	}
}

// A scheduler joining takes about 1/n of the keys, all to itself; one
// leaving gives back only its own.
func TestJoinMovesOnlyTheNewcomersShare(t *testing.T) {
	const keys = 20000
	two := New([]string{"scheduler", "scheduler-7"})
	three := New([]string{"scheduler", "scheduler-7", "scheduler-99"})
	moved := 0
	count := map[string]int{}
	for k := range uint64(keys) {
		a, b := two.Home(k), three.Home(k)
		count[b]++
		if a != b {
			moved++
			if b != "scheduler-99" {
				t.Fatalf("key %d moved from %s to %s, not to the newcomer", k, a, b)
			}
		}
	}
	if moved < keys/3*7/10 || moved > keys/3*13/10 {
		t.Errorf("%d of %d keys moved to the third scheduler, want about a third", moved, keys)
	}
	for name, n := range count {
		if n < keys/3*7/10 || n > keys/3*13/10 {
			t.Errorf("%s homes %d of %d keys", name, n, keys)
		}
	}
}

func TestSameMembersSameHomes(t *testing.T) {
	r1 := New([]string{"b", "a", "c"})
	r2 := New([]string{"c", "b", "a", "a"})
	for k := range uint64(1000) {
		if r1.Home(k) != r2.Home(k) {
			t.Fatalf("key %d: %s and %s", k, r1.Home(k), r2.Home(k))
		}
	}
	for _, n := range []string{"a", "b", "c"} {
		s := r1.Successor(n)
		if s == n || s == "" {
			t.Errorf("successor of %s: %q", n, s)
		}
	}
	if got := fmt.Sprint(r1.Names()); got != "[a b c]" {
		t.Errorf("names %s", got)
	}
}
