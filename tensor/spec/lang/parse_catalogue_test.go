package lang

import (
	"bufio"
	"encoding/binary"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"marsfs/tensor"
)

// npyHeaderMeta reads the dtype and shape of a .npy file's header.
func npyHeaderMeta(t *testing.T, path string) (tensor.DType, []int, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 10 {
		return 0, nil, false
	}
	n := int(binary.LittleEndian.Uint16(b[8:10]))
	h := string(b[10 : 10+n])
	descr := regexp.MustCompile(`'descr': '([^']*)'`).FindStringSubmatch(h)
	shape := regexp.MustCompile(`'shape': \(([^)]*)\)`).FindStringSubmatch(h)
	if descr == nil || shape == nil {
		return 0, nil, false
	}
	var dt tensor.DType
	for _, d := range tensor.DTypes {
		if d.NPYDescr() == descr[1] {
			dt = d
		}
	}
	var s []int
	for _, f := range strings.Split(shape[1], ",") {
		if f = strings.TrimSpace(f); f != "" {
			v, _ := strconv.Atoi(f)
			s = append(s, v)
		}
	}
	return dt, s, true
}

// TestParseCatalogueDTypes parses every case of the NumPy golden catalogue
// (testdata/catalogue, when present) and checks the dtype and shape of each
// output against the .npy files NumPy wrote, and that marsfs refuses what
// NumPy refuses. It needs no kernels: the full comparison of values is the
// catalogue test's.
func TestParseCatalogueDTypes(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "catalogue")
	if _, err := os.Stat(filepath.Join(dir, "exprs.txt")); err != nil {
		t.Skip("no catalogue in testdata")
	}
	count := 0
	defer func() { t.Logf("%d cases", count) }()
	for _, file := range []string{"exprs.txt", "promotion.txt", "conformance.txt", "features.txt"} {
		f, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		var name string
		var text []string
		var outs []string
		var inputs []string
		refused := false
		flush := func() {
			if name == "" {
				return
			}
			if len(outs) == 0 {
				outs = []string{"y"}
			}
			e := testEnv{}
			for _, in := range inputs {
				dt, shape, ok := npyHeaderMeta(t, filepath.Join(dir, "golden", name, "in_"+in+".npy"))
				if !ok {
					t.Errorf("%s: cannot read input %s", name, in)
					return
				}
				c, _ := spec.DefaultChunksAt(shape, syntax.SrcPos{})
				e[in] = &tensor.TiledTensor{Name: in, Shape: shape, DType: dt, Chunks: c}
			}
			count++
			src := strings.ReplaceAll(strings.Join(text, "\n"), "{c}", "2")
			g, err := ParseText(src, e)
			if refused {
				if err == nil {
					t.Errorf("%s: NumPy refuses %q, marsfs parses it", name, src)
				}
				return
			}
			if err != nil {
				t.Errorf("%s: %q: %v", name, src, err)
				return
			}
			for i, o := range outs {
				dt, shape, ok := npyHeaderMeta(t, filepath.Join(dir, "golden", name, "out_"+o+".npy"))
				if !ok {
					continue
				}
				if i >= len(g.Outputs) {
					t.Errorf("%s: missing output %s", name, o)
					continue
				}
				n := g.Outputs[i].Node
				// A length the data decides agrees with any NumPy gives.
				agrees := slices.EqualFunc(n.Shape, shape, func(a, b int) bool { return a == b || a == tensor.Unknown })
				if n.DType != dt || !agrees {
					t.Errorf("%s: %q: %s %s, NumPy %s %s", name, src, spec.ShapeString(n.Shape), n.DType, spec.ShapeString(shape), dt)
				}
			}
		}
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "case "):
				flush()
				name, text, outs, inputs, refused = strings.TrimSpace(line[5:]), nil, nil, nil, false
			case strings.HasPrefix(line, "spec "):
				text = append(text, line[5:])
			case strings.HasPrefix(line, "out "):
				outs = strings.Fields(line[4:])
			case strings.HasPrefix(line, "in "):
				inputs = append(inputs, strings.TrimSpace(strings.SplitN(line[3:], "=", 2)[0]))
			case strings.HasPrefix(line, "check error"):
				refused = true
			}
		}
		flush()
	}
}
