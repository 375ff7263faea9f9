package fusefs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShellRefusals runs bash's redirections into a mounted session's
// submit file: a spec refused at its write fails the command, although
// bash ignores the error of closing a redirection; an accepted one empties
// the error file.
func TestShellRefusals(t *testing.T) {
	dir := mountTree(t)
	s := filepath.Join(dir, "sessions", strings.TrimSpace(readFile(t, filepath.Join(dir, "sessions/clone"))))
	for _, tc := range []struct {
		cmd, error string
	}{
		{`echo 'y = (' > submit`, "never closed"},
		{`printf '\n' > submit`, "empty spec"},
		{`echo '# c' > submit`, "empty spec"},
		{`echo 'x = frobnicate(3)' > submit`, "unknown function frobnicate"},
		{`printf 'x = ones(3)\ny = x + \\\n' > submit`, "expected an expression"},
	} {
		out, err := shell(s, tc.cmd)
		if err == nil {
			t.Errorf("%s: exit 0, want a refusal", tc.cmd)
		} else if !strings.Contains(string(out), "Invalid argument") {
			t.Errorf("%s: %v: %s, want Invalid argument", tc.cmd, err, out)
		}
		if got := readFile(t, filepath.Join(s, "error")); !strings.Contains(got, tc.error) {
			t.Errorf("%s: error file %q, want %q", tc.cmd, got, tc.error)
		}
	}
	if out, err := shell(s, `echo 'x = arange(3)' > submit && cat graphs/last/wait`); err != nil || !strings.HasPrefix(string(out), "SUCCEEDED") {
		t.Errorf("an accepted spec: %v: %s", err, out)
	}
	if got := readFile(t, filepath.Join(s, "error")); got != "" {
		t.Errorf("error file after an accepted spec: %q, want it empty", got)
	}
}

// shell runs script with bash in directory dir of the mount. bash changes
// into it itself: a child's working directory set by os/exec is entered
// between fork and exec, while this process, which serves the mount, waits
// for the child (vfork), and would never answer the lookup.
func shell(dir, script string) ([]byte, error) {
	return exec.Command("bash", "-c", `cd "$1" && `+script, "bash", dir).CombinedOutput()
}

// TestPythonRefusals writes specs from Python: every refusal, found at the
// write or only at the close, raises OSError with errno EINVAL.
func TestPythonRefusals(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	dir := mountTree(t)
	s := filepath.Join(dir, "sessions", strings.TrimSpace(readFile(t, filepath.Join(dir, "sessions/clone"))))
	const script = `
import errno, os, sys

def attempt(text):
    try:
        with open(os.path.join(sys.argv[1], "submit"), "w") as f:
            f.write(text)
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    return "ok"

# refused at the write (the buffered text goes out at the close), refused
# at the close (the write leaves a statement open), accepted
print(attempt("x = frobnicate(3)\n"), attempt("y = (1"), attempt("x = ones(2)\n"))
`
	out, err := exec.Command(python, "-c", script, s).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "EINVAL EINVAL ok" {
		t.Errorf("python saw %q, want EINVAL EINVAL ok", got)
	}
}
