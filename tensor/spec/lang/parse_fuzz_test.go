package lang

import (
	"errors"
	"marsfs/tensor/spec"
	"testing"

	"marsfs/tensor/spec/syntax"
)

// FuzzParse checks that no text makes Parse panic, that every error is a
// *syntax.Error, and that every graph it accepts keeps the graph invariants and
// survives the JSON round trip.
func FuzzParse(f *testing.F) {
	for _, tc := range lowered {
		f.Add(tc.src)
	}
	for _, tc := range specErrors {
		f.Add(tc.src)
	}
	for i, tc := range numpyCases {
		if i%4 == 0 {
			f.Add(numpySetup + "r = " + tc.expr)
		}
	}
	f.Add("x = rand(100000000, chunks=10000000, seed=1)\ny = rand(100000000, chunks=10000000, seed=2)\npi = 4 * ((x*x + y*y) < 1).mean()")
	f.Add("b = a[1:, ::2] * k\nc = b.rechunk(1)\nfetch c")
	f.Fuzz(func(t *testing.T, src string) {
		g, err := ParseText(src, env)
		if err != nil {
			var se *syntax.Error
			if !errors.As(err, &se) || error(se) != err {
				t.Fatalf("%q: error %T is not a *syntax.Error: %v", src, err, err)
			}
			if se.Line < 1 || se.Col < 1 || se.Msg == "" {
				t.Fatalf("%q: error without a position or message: %+v", src, *se)
			}
			return
		}
		checkGraph(t, src, g)
		doc, err := g.JSON()
		if err != nil {
			t.Fatalf("%q: JSON: %v", src, err)
		}
		g2, err := spec.ParseJSON(doc, env)
		if err != nil {
			t.Fatalf("%q: ParseJSON: %v\n%s", src, err, doc)
		}
		if d := sameGraph(g, g2); d != "" {
			t.Fatalf("%q: round trip: %s", src, d)
		}
	})
}

// FuzzParseJSON checks that no document makes ParseJSON panic and that
// every error is a *syntax.Error.
func FuzzParseJSON(f *testing.F) {
	for _, tc := range jsonErrors {
		f.Add(tc.src)
	}
	for _, tc := range lowered {
		if g, err := ParseText(tc.src, nil); err == nil {
			if doc, err := g.JSON(); err == nil {
				f.Add(string(doc))
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		g, err := spec.ParseJSON([]byte(src), env)
		if err != nil {
			var se *syntax.Error
			if !errors.As(err, &se) || error(se) != err {
				t.Fatalf("%q: error %T is not a *syntax.Error: %v", src, err, err)
			}
			return
		}
		checkGraph(t, src, g)
		if _, err := g.JSON(); err != nil {
			t.Fatalf("%q: JSON: %v", src, err)
		}
	})
}
