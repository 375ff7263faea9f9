package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPicturesInChromium draws the pictures of a real run in a browser:
// `marsfs up` with two worker processes, mounted with FUSE, runs a matrix
// product and a reduction over 4,000 small chunks; timeline.svg is read
// through the mount while the product runs and once it has ended, and
// plan.svg of both graphs (the second summarized) after. Each must parse
// as XML and, drawn by headless Chromium, make a screenshot that is not
// blank: enough pixels that are not white, in several colours.
//
// Chromium reads a copy of each file: the tree's files have no size until
// read (they are rendered at the open), and a browser takes a file of size
// 0 for an empty one. With MARSFS_SCREENSHOTS=DIR the screenshots are kept
// in DIR.
func TestPicturesInChromium(t *testing.T) {
	needFUSE(t)
	browser := chromium(t)
	bin := build(t)
	_, dir := startMounted(t, bin, "--workers", "2")
	clone, err := os.ReadFile(filepath.Join(dir, "sessions", "clone"))
	if err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(dir, "sessions", strings.TrimSpace(string(clone)))
	submit := func(spec string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(s, "submit"), []byte(spec), 0644); err != nil {
			t.Fatalf("submit: %v", err)
		}
	}
	read := func(path string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(s, path))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	submit("x = rand(2400, 2400, chunks=600, seed=1)\ny = (x @ x.T).sum(axis=0)\nz = (x * 2 + 1).sum()\nfetch y, z\n")
	// Live: a timeline read while the graph runs is a picture too.
	var live []byte
	for deadline := time.Now().Add(time.Minute); ; {
		live = read("graphs/1/timeline.svg")
		status := string(read("graphs/1/status"))
		if strings.Contains(status, "\nrunning 0\n") && !strings.HasPrefix(status, "RUNNING") {
			t.Logf("the graph ended before a timeline showed it running")
			break
		}
		if bytes.Contains(live, []byte("(running)")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no timeline showed a running operand:\n%s", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := string(read("graphs/1/wait")); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph 1: %s", st)
	}
	submit("w = (ones(400000, chunks=100) + 1).sum()\n")
	if st := string(read("graphs/2/wait")); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph 2: %s", st)
	}
	out := t.TempDir()
	if d := os.Getenv("MARSFS_SCREENSHOTS"); d != "" {
		out = d
	}
	pictures := []struct {
		name string
		svg  []byte
		want []string // text the picture must hold
	}{
		{"timeline-live", live, []string{"RUNNING", "worker-"}},
		{"timeline", read("graphs/1/timeline.svg"), []string{"SUCCEEDED", "computing", "fuse(matmul+sum.map)"}},
		{"plan", read("graphs/1/plan.svg"), []string{"fuse(matmul+sum.map)", "worker-1", "worker-2"}},
		{"timeline-4000", read("graphs/2/timeline.svg"), []string{"under a pixel each"}},
		{"plan-4000", read("graphs/2/plan.svg"), []string{"summarized"}},
	}
	for _, p := range pictures {
		t.Run(p.name, func(t *testing.T) {
			width, height := svgSize(t, p.svg)
			for _, w := range p.want {
				if !bytes.Contains(p.svg, []byte(w)) {
					t.Errorf("%s lacks %q", p.name, w)
				}
			}
			file := filepath.Join(out, p.name+".svg")
			if err := os.WriteFile(file, p.svg, 0644); err != nil {
				t.Fatal(err)
			}
			shot := filepath.Join(out, p.name+".png")
			screenshot(t, browser, file, shot, min(width, 2400), min(height, 1600))
			inked, colours := ink(t, shot)
			t.Logf("%s: %dx%d, %.1f%% of the pixels inked, %d colours", shot, width, height, 100*inked, colours)
			if inked < 0.01 || colours < 3 {
				t.Errorf("%s looks blank: %.2f%% of its pixels inked, in %d colours", shot, 100*inked, colours)
			}
		})
	}
}

// chromium returns the path of Debian's chromium, or skips the test.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := osexec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium to draw the pictures in (Debian: apt-get install chromium; .ci/run installs it)")
	return ""
}

// svgSize checks that doc parses as XML with an svg root, and returns its
// width and height in pixels.
func svgSize(t *testing.T, doc []byte) (width, height int) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return width, height
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "svg" {
			for _, a := range se.Attr {
				v, _ := strconv.ParseFloat(a.Value, 64)
				switch a.Name.Local {
				case "width":
					width = int(v + 0.5)
				case "height":
					height = int(v + 0.5)
				}
			}
			if width <= 0 || height <= 0 {
				t.Fatalf("svg of size %dx%d", width, height)
			}
		}
	}
}

// screenshot draws file in headless Chromium, in a window of the given
// size, into the PNG shot. Chromium runs with a fresh profile and nothing
// that reaches the network.
func screenshot(t *testing.T, browser, file, shot string, width, height int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--hide-scrollbars", fmt.Sprintf("--window-size=%d,%d", width, height),
		"--screenshot="+shot, "file://"+file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
}

// ink decodes the PNG shot and returns the share of its pixels that are not
// white, and how many colours (to 4 bits a channel) they come in.
func ink(t *testing.T, shot string) (float64, int) {
	t.Helper()
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	b := img.Bounds()
	inked := 0
	colours := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				inked++
				colours[[3]uint32{r >> 12, g >> 12, bl >> 12}] = true
			}
		}
	}
	return float64(inked) / float64(area(b)), len(colours)
}

func area(r image.Rectangle) int { return max(r.Dx()*r.Dy(), 1) }
