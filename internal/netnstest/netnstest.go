// Package netnstest gives marsfs' multi-host tests their hosts: Linux
// network namespaces joined by a bridge, each with its own address on a
// private /24, so that schedulers and workers started in them see only
// each other's addresses, as on separate machines.
//
// It runs in the test process and needs root and iproute2's ip command;
// Need skips the test where either is missing.
package netnstest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// A Host is one namespace of a test: its name, the address of its eth0,
// and what runs there (for messages).
type Host struct{ NS, IP, Name string }

// Hosts names a test's hosts: host i is called names[i], lives in
// namespace prefix+names[i] and has address subnet.(i+1), subnet being
// the first three numbers of a private /24 ("10.215.0").
func Hosts(prefix, subnet string, names ...string) []Host {
	hosts := make([]Host, len(names))
	for i, name := range names {
		hosts[i] = Host{NS: prefix + name, IP: fmt.Sprintf("%s.%d", subnet, i+1), Name: name}
	}
	return hosts
}

// Need skips t unless it may make namespaces: not with -short (the tests
// that use them start processes), and only as root with ip installed.
func Need(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes in network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
}

// IP runs ip with args, failing t on error with ip's output.
func IP(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Bridge makes namespace hub with a bridge, and a namespace for each host
// joined to it by a veth pair (eth0 inside, with the host's address on a
// /24, and lo up). Every namespace made is deleted when t ends, those of
// a setup that failed halfway included.
func Bridge(t testing.TB, hub string, hosts []Host) {
	t.Helper()
	var made []string
	t.Cleanup(func() {
		for _, ns := range made {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	IP(t, "netns", "add", hub)
	made = append(made, hub)
	IP(t, "-n", hub, "link", "add", "br0", "type", "bridge")
	IP(t, "-n", hub, "link", "set", "br0", "up")
	for i, h := range hosts {
		IP(t, "netns", "add", h.NS)
		made = append(made, h.NS)
		port := fmt.Sprintf("p%d", i)
		IP(t, "link", "add", "name", port, "netns", hub, "type", "veth", "peer", "name", "eth0", "netns", h.NS)
		IP(t, "-n", hub, "link", "set", port, "master", "br0")
		IP(t, "-n", hub, "link", "set", port, "up")
		IP(t, "-n", h.NS, "addr", "add", h.IP+"/24", "dev", "eth0")
		IP(t, "-n", h.NS, "link", "set", "eth0", "up")
		IP(t, "-n", h.NS, "link", "set", "lo", "up")
	}
}

// Link sets host's eth0 up or down: a partition of that host from every
// other, and its healing.
func Link(t testing.TB, h Host, up bool) {
	t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	IP(t, "-n", h.NS, "link", "set", "eth0", state)
}

// Bytes reads each host's eth0 counters: bytes sent and received.
func Bytes(t testing.TB, hosts []Host) [][2]int64 {
	t.Helper()
	out := make([][2]int64, len(hosts))
	for i, h := range hosts {
		for j, f := range []string{"tx_bytes", "rx_bytes"} {
			b, err := exec.Command("ip", "netns", "exec", h.NS, "cat", "/sys/class/net/eth0/statistics/"+f).Output()
			if err != nil {
				t.Fatalf("%s's %s: %v", h.Name, f, err)
			}
			out[i][j], err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				t.Fatalf("%s's %s: %v", h.Name, f, err)
			}
		}
	}
	return out
}
