package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadyAndProbes checks marsfs ready: it fails, after its timeout, with
// the reason where nothing listens; it succeeds on a serving server and
// leaves no session behind; and a bare TCP probe of the server (a connect
// and a close) is not logged as a refused connection.
func TestReadyAndProbes(t *testing.T) {
	bin := build(t)
	p := startUp(t, bin, "--workers", "0")
	none := filepath.Join(t.TempDir(), "nobody.sock")
	out, errs, code := p.marsfs(t, "", "ready", "--addr", none, "--timeout", "300ms")
	if code == 0 || !strings.Contains(errs, "not ready after 300ms") || !strings.Contains(errs, "no marsfs server listens there") {
		t.Errorf("ready where nothing listens: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, addr := range []string{p.unx, p.tcp} {
		out, errs, code = p.marsfs(t, "", "ready", "--addr", addr)
		if code != 0 || out != "marsfs at "+addr+" is ready\n" {
			t.Errorf("ready on %s: exit %d, stdout %q, stderr %q", addr, code, out, errs)
		}
	}
	if out, _, _ := p.marsfs(t, "", "ls", "--addr", p.unx, "/sessions"); strings.TrimSpace(strings.ReplaceAll(out, "clone", "")) != "" {
		t.Errorf("ready made sessions: /sessions lists %q", out)
	}
	for i := 0; i < 3; i++ {
		nc, err := net.Dial("tcp", p.tcp)
		if err != nil {
			t.Fatal(err)
		}
		nc.Close()
	}
	// A client after the probes: the server has handled them by then.
	if _, errs, code := p.marsfs(t, "", "ready", "--addr", p.tcp, "-q"); code != 0 {
		t.Fatalf("ready after the probes: exit %d: %s", code, errs)
	}
	p.stop(t)
	if strings.Contains(p.stderr.String(), "refused") {
		t.Errorf("the probes were logged as refusals:\n%s", p.stderr)
	}
}
