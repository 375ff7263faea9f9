package lang

import (
	"testing"

	"marsfs/tensor/spec/syntax"
)

// TestPrefixErrors: a spec added to a Prefix a piece at a time, cut at
// every statement boundary, fails with the error parsing it whole gives
// (the same message, line and column), in the piece that holds the bad
// statement and not before.
func TestPrefixErrors(t *testing.T) {
	for _, src := range []string{
		"x = ones(3)\ny = ones(4)\n\n# a comment\nz = x + y\n",
		"x = ones(3)\ny = frobnicate(x)\n",
		"a = 1\nb = (a +\n  2)\nc = ones(b)[5]\n",
		"x = ones(3)\nfetch x\nfetch x\n",
		"x = ones(3)\nfetch y\n",
		"x = ones((2, 3))\ny = x @ x\n",
	} {
		_, want := ParseText(src, nil)
		if want == nil {
			t.Fatalf("%q parses", src)
		}
		// Cut after every statement.
		p := NewPrefix(nil, nil)
		var got error
		rest, line := src, 1
		for rest != "" && got == nil {
			n := syntax.Complete(rest)
			// One statement a piece: the first line of what Complete
			// gives, with the lines continuing it.
			piece := rest[:n]
			for i := 1; i < n; i++ {
				if syntax.Complete(rest[:i]) == i {
					piece = rest[:i]
					break
				}
			}
			got = p.Add(piece)
			if got != nil {
				if se, ok := got.(*syntax.Error); !ok || se.Line < line {
					t.Errorf("%q: error %v in the piece at line %d", src, got, line)
				}
			}
			for _, c := range piece {
				if c == '\n' {
					line++
				}
			}
			rest = rest[len(piece):]
		}
		if got == nil || got.Error() != want.Error() {
			t.Errorf("%q: pieces give %v, the whole %v", src, got, want)
		}
	}
	// A good spec adds without error, and fetching what it assigned is
	// good. (Fetching a name before the piece that assigns it is not,
	// unlike in one text: a writer's piece is judged as it comes.)
	p := NewPrefix(nil, nil)
	for _, piece := range []string{"x = ones(3)\n", "# more\n\ny = x * 2\n", "fetch y, x\n"} {
		if err := p.Add(piece); err != nil {
			t.Errorf("%q: %v", piece, err)
		}
	}
}
