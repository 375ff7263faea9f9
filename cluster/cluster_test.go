package cluster

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, n *Node, d time.Duration, what string, cond func([]Member) bool) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := time.After(d)
	for {
		ch := n.Changed()
		if cond(n.Members()) {
			return time.Since(start)
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s: not seen within %v; members %v", what, d, n.Members())
		}
	}
}

func state(ms []Member, name string) (State, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m.State, true
		}
	}
	return 0, false
}

func start(t *testing.T, name string, role Role, join []string, key []byte) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := Join(ctx, Config{Name: name, Join: join, Fast: true, SecretKey: key,
		Meta: Meta{Role: role, Addr: "127.0.0.1:" + name, Slots: 2, PID: os.Getpid()}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestJoinLeaveFail starts three nodes, sees them join with their metadata,
// then sees one leave gracefully and one crash.
func TestJoinLeaveFail(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("0123456789abcdef")} {
		g0 := runtime.NumGoroutine()
		s := start(t, "s", RoleScheduler, nil, key)
		w1 := start(t, "w1", RoleWorker, []string{s.GossipAddr()}, key)
		w2 := start(t, "w2", RoleWorker, []string{s.GossipAddr()}, key)
		d := waitFor(t, s, 2*time.Second, "joins", func(ms []Member) bool {
			st1, ok1 := state(ms, "w1")
			st2, ok2 := state(ms, "w2")
			return ok1 && ok2 && st1 == Alive && st2 == Alive
		})
		t.Logf("key %v: joins seen in %v", key != nil, d)
		waitFor(t, w2, 2*time.Second, "w2 sees w1", func(ms []Member) bool { st, ok := state(ms, "w1"); return ok && st == Alive })
		m, _ := s.Member("w1")
		if m.Meta.Role != RoleWorker || m.Meta.Addr != "127.0.0.1:w1" || m.Meta.Slots != 2 || m.Meta.PID != os.Getpid() {
			t.Errorf("w1 meta = %+v", m.Meta)
		}
		if me, _ := s.Member("s"); me.Meta.Role != RoleScheduler || me.State != Alive {
			t.Errorf("self = %+v", me)
		}
		if err := w1.Leave(time.Second); err != nil {
			t.Fatal(err)
		}
		d = waitFor(t, s, 2*time.Second, "w1 left", func(ms []Member) bool { st, _ := state(ms, "w1"); return st == Left })
		t.Logf("leave seen in %v", d)
		w2.Close() // a crash: no leave message
		d = waitFor(t, s, 4*time.Second, "w2 failed", func(ms []Member) bool { st, _ := state(ms, "w2"); return st == Failed })
		t.Logf("failure seen in %v", d)
		s.Close()
		checkGoroutines(t, g0)
	}
}

func TestConfigErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "name is empty"},
		{Config{Name: "x", BindAddr: "nonsense"}, "bind address"},
		{Config{Name: "x", BindAddr: "127.0.0.1:99999"}, "bad port"},
		{Config{Name: "x", SecretKey: []byte("short")}, "secret key"},
		{Config{Name: "x", Meta: Meta{Addr: strings.Repeat("a", 600)}}, "metadata"},
	} {
		n, err := Join(ctx, tc.cfg)
		if err == nil {
			n.Close()
			t.Errorf("%+v: no error", tc.cfg)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %q, want %q", tc.cfg, err, tc.want)
		}
	}
}

// TestJoinTimeout joins through an address where nobody listens.
func TestJoinTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	n, err := Join(ctx, Config{Name: "lonely", Fast: true, Join: []string{"127.0.0.1:1"}})
	if err == nil {
		n.Close()
		t.Fatal("joined nobody")
	}
}

// checkGoroutines fails if goroutines started since g0 outlive a grace period.
func checkGoroutines(t *testing.T, g0 int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > g0 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left (had %d):\n%s", runtime.NumGoroutine(), g0, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMain(m *testing.M) {
	g0 := runtime.NumGoroutine()
	code := m.Run()
	deadline := time.Now().Add(5 * time.Second)
	for code == 0 && runtime.NumGoroutine() > g0 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			os.Stderr.Write(buf[:runtime.Stack(buf, true)])
			code = 1
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	os.Exit(code)
}

// TestJoinFailures joins a cluster that is not there, and one that speaks
// with another key: each fails within the join timeout, saying which.
func TestJoinFailures(t *testing.T) {
	ctx := context.Background()
	_, err := Join(ctx, Config{Name: "w1", Join: []string{"127.0.0.1:1"}, JoinTimeout: 500 * time.Millisecond, Fast: true})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the cluster at 127.0.0.1:1") {
		t.Errorf("join of nobody: %v", err)
	}
	s := start(t, "s", RoleScheduler, nil, nil)
	defer s.Leave(time.Second)
	key := []byte("0123456789abcdef")
	_, err = Join(ctx, Config{Name: "w2", Join: []string{s.GossipAddr()}, SecretKey: key, JoinTimeout: 500 * time.Millisecond, Fast: true})
	if err == nil || !strings.Contains(err.Error(), "authentication failed") {
		t.Errorf("join with another key: %v", err)
	}
}

// TestSend: a message sent to a member by name reaches its OnMsg, with a
// key as without; a name not in the cluster is an error.
func TestSend(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("0123456789abcdef")} {
		ctx := context.Background()
		got := make(chan string, 1)
		a, err := Join(ctx, Config{Name: "a", Fast: true, SecretKey: key, OnMsg: func(m []byte) { got <- string(m) }})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Join(ctx, Config{Name: "b", Fast: true, SecretKey: key, Join: []string{a.GossipAddr()}})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Send("a", []byte("hello")); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			if m != "hello" {
				t.Fatalf("got %q", m)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no message in 5 s")
		}
		if err := b.Send("nobody", []byte("x")); err == nil {
			t.Fatal("sent to nobody")
		}
		b.Close()
		a.Close()
	}
}
