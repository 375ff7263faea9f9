package lang

import (
	"fmt"
	"marsfs/tensor/spec"
	"strings"
	"testing"
)

const piSpec = `# Monte Carlo pi
x = rand(100000000, chunks=10000000, seed=1)
y = rand(100000000, chunks=10000000, seed=2)
pi = 4 * ((x*x + y*y) < 1).mean()
`

// longSpec is a spec of n statements, each a few operations on the last.
func longSpec(n int) string {
	var b strings.Builder
	b.WriteString("x0 = rand(1000, 1000, seed=1)\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "x%d = (x%d * 2 + 1).sum(axis=0, keepdims=True) / x%d[::2].T[:, 0]\n", i, i-1, i-1)
	}
	return b.String()
}

func BenchmarkParse(b *testing.B) {
	for _, tc := range []struct {
		name, src string
	}{{"pi", piSpec}, {"1000-lines", longSpec(1000)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.src)))
			for b.Loop() {
				if _, err := ParseText(tc.src, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseJSON(b *testing.B) {
	g, err := ParseText(longSpec(1000), nil)
	if err != nil {
		b.Fatal(err)
	}
	doc, err := g.JSON()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := spec.ParseJSON(doc, nil); err != nil {
			b.Fatal(err)
		}
	}
}
