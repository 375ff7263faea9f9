package fs

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"marsfs/exec/engine"
	"marsfs/exec/sched"
)

// TestDialSaysWhatHappened: a loopback client of a server that is going
// (it accepts, then hangs up, as a restarting up's listener does) is told
// the server is restarting or stopping, one of an address where nothing
// listens that the connection was refused; neither is sent to find a key.
func TestDialSaysWhatHappened(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, err = Dial(l.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "the server is restarting or stopping") || strings.Contains(err.Error(), "key") {
		t.Errorf("dial of a server that hangs up: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	<-done
	_, err = Dial(addr)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "key") {
		t.Errorf("dial of an address where nothing listens: %v", err)
	}
}

// TestPlainRefusedBeyondLoopback: a keyed server listening beyond
// loopback answers a plain 9P client there with a refusal that names the
// key.
func TestPlainRefusedBeyondLoopback(t *testing.T) {
	var ip net.IP
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ip = n.IP
			break
		}
	}
	if ip == nil {
		t.Skip("no address beyond loopback on this host")
	}
	key := bytes.Repeat([]byte{3}, 32)
	l, err := ListenKey(net.JoinHostPort(ip.String(), "0"), key)
	if err != nil {
		t.Fatal(err)
	}
	run := sched.NewLocal(1)
	defer run.Close()
	eng := engine.New(run)
	defer eng.Close()
	srv := NewServer(eng, Config{Key: key})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() {
		srv.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	_, err = Dial(l.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "refused plain 9P: a server beyond loopback serves only clients with its key") {
		t.Errorf("plain dial beyond loopback: %v", err)
	}
	c, err := DialKey(l.Addr().String(), key)
	if err != nil {
		t.Fatalf("keyed dial: %v", err)
	}
	c.Close()
}
