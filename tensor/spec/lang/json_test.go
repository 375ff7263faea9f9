package lang

import (
	"errors"
	"fmt"
	"marsfs/tensor/spec"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor/spec/syntax"
)

// sameGraph reports how two graphs differ, or "" when they are equal but
// for Source.
func sameGraph(a, b *spec.Graph) string {
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Sprintf("%d nodes, want %d", len(b.Nodes), len(a.Nodes))
	}
	for i, x := range a.Nodes {
		y := b.Nodes[i]
		if x.ID != y.ID || x.Op != y.Op || x.DType != y.DType || x.Weak != y.Weak ||
			!slices.Equal(x.Shape, y.Shape) || !reflect.DeepEqual(x.Chunks, y.Chunks) {
			return fmt.Sprintf("node %d: %+v, want %+v", i, *y, *x)
		}
		if len(x.Inputs) != len(y.Inputs) {
			return fmt.Sprintf("node %d: %d inputs, want %d", i, len(y.Inputs), len(x.Inputs))
		}
		for j := range x.Inputs {
			if x.Inputs[j].ID != y.Inputs[j].ID {
				return fmt.Sprintf("node %d: input %d is %d, want %d", i, j, y.Inputs[j].ID, x.Inputs[j].ID)
			}
		}
		ax, ay := x.Attrs, y.Attrs
		if !sameFloat(ax.Value, ay.Value) || !sameFloat(ax.Start, ay.Start) || !sameFloat(ax.Step, ay.Step) {
			return fmt.Sprintf("node %d: attrs %+v, want %+v", i, ay, ax)
		}
		ax.Value, ay.Value, ax.Start, ay.Start, ax.Step, ay.Step = 0, 0, 0, 0, 0, 0
		if !reflect.DeepEqual(ax, ay) {
			return fmt.Sprintf("node %d: attrs %+v, want %+v", i, ay, ax)
		}
	}
	if len(a.Outputs) != len(b.Outputs) {
		return fmt.Sprintf("%d outputs, want %d", len(b.Outputs), len(a.Outputs))
	}
	for i, o := range a.Outputs {
		if p := b.Outputs[i]; p.Name != o.Name || p.Node.ID != o.Node.ID {
			return fmt.Sprintf("output %d: %s=%d, want %s=%d", i, p.Name, p.Node.ID, o.Name, o.Node.ID)
		}
	}
	return ""
}

func sameFloat(a, b float64) bool {
	return a == b && math.Signbit(a) == math.Signbit(b) || math.IsNaN(a) && math.IsNaN(b)
}

// roundTrip checks text -> Graph -> JSON -> Graph -> JSON.
func roundTrip(t *testing.T, src string, env spec.Env) {
	t.Helper()
	g, err := ParseText(src, env)
	if err != nil {
		t.Errorf("%q: %v", src, err)
		return
	}
	doc, err := g.JSON()
	if err != nil {
		t.Errorf("%q: JSON: %v", src, err)
		return
	}
	g2, err := spec.ParseJSON(doc, env)
	if err != nil {
		t.Errorf("%q: ParseJSON: %v\n%s", src, err, doc)
		return
	}
	if d := sameGraph(g, g2); d != "" {
		t.Errorf("%q: round trip: %s", src, d)
	}
	if g2.Source != string(doc) {
		t.Errorf("%q: Source of the JSON graph is not the document", src)
	}
	doc2, err := g2.JSON()
	if err != nil || string(doc2) != string(doc) {
		t.Errorf("%q: JSON of the round trip differs (%v)", src, err)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, tc := range numpyCases {
		roundTrip(t, numpySetup+"r = "+tc.expr, nil)
	}
	for _, tc := range lowered {
		roundTrip(t, tc.src, nil)
	}
	for _, src := range []string{
		"x = full(3, nan) + full(3, inf) - full(3, -inf) + full(3, -0.0)",
		"x = ones((4, 6), chunks=((1, 3), 2)).rechunk((2, 3))",
		"x = randint(-5, 5, size=(3, 3), seed=7)\ny = uniform(1, 2, size=3, seed=1)\nz = normal(size=2)\nw = randn(2)\nfetch x, y, z, w",
		"x = eye(4, k=2)[::-1, 1:3].T",
		"x = arange(10) > 4.5\ny = x.any()\nz = where(x, 1, 2.5)\nfetch x, y, z",
		"b = a[1:, ::2] * k\nc = b.rechunk(1)\nfetch c",
		"x = linspace(0, 1, 11, chunks=4).cumprod()",
		"x = ones(3, dtype=int32) & True",
		"x = ones(0)",
		"x = full((), 3)",
	} {
		roundTrip(t, src, env)
	}
}

func TestJSONForm(t *testing.T) {
	g, err := ParseText("x = rand(4, chunks=2, seed=3)\ny = x.sum(axis=0) * 2", nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := g.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"version": 1`, `"op":"rand"`, `"seed":3`, `"chunks":[[2,2]]`, `"op":"sum"`,
		`"weak":true`, `"int_value":2`, `"name":"y"`,
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("JSON lacks %s:\n%s", want, doc)
		}
	}
	// A hand-written document: any ids, any order, default chunks.
	src := `{"version": 1,
	  "nodes": [
	    {"id": 7, "op": "add", "inputs": [3, 9]},
	    {"id": 3, "op": "full", "shape": [10], "dtype": "float64", "attrs": {"value": 1.5}},
	    {"id": 9, "op": "scalar", "dtype": "int64", "weak": true, "attrs": {"int_value": 2}}
	  ],
	  "outputs": [{"name": "s", "node": 7}]}`
	g, err = spec.ParseJSON([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, "hand-written", g)
	want := "0 full() (10,) float64\n1 scalar() () int64 weak\n2 add(0,1) (10,) float64\n-> s=2\n"
	if got := dumpGraph(g); got != want {
		t.Errorf("hand-written:\n%s\nwant\n%s", got, want)
	}
	if g.Source != src {
		t.Errorf("Source is not the document")
	}
}

var jsonErrors = []struct{ src, want string }{
	{`{"version": 1, "nodes": [`, "json: unexpected EOF"},
	{"{\"version\": 1,\n \"nodes\": [}", "2:12: json: invalid character '}' looking for beginning of value"},
	{`{"version": 2, "nodes": [], "outputs": []}`, "json: version 2 is not supported (marsfs reads version 1)"},
	{`{"nodes": [], "outputs": []}`, "json: version 0 is not supported (marsfs reads version 1)"},
	{`{"version": 1, "nodes": [], "outputs": [], "extra": 1}`, `json: json: unknown field "extra"`},
	{`{"version": 1, "nodes": [], "outputs": []}`, "json: the document has no outputs"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "frob"}], "outputs": [{"name": "x", "node": 0}]}`, `node 0: unknown op "frob"`},
	{`{"version": 1, "nodes": [{"id": 0, "op": "add", "inputs": [1, 1]}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: input 1 is not a node"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "negative", "inputs": [1]}, {"id": 1, "op": "negative", "inputs": [0]}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: its inputs form a cycle through node 1"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "negative", "inputs": [0]}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: its inputs form a cycle through node 0"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64"}, {"id": 0, "op": "full", "shape": [3], "dtype": "float64"}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: id used twice"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64"}, {"id": 1, "op": "add", "inputs": [0]}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: add takes 2 inputs, not 1"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "dtype": "float64"}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: full needs a shape"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3]}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: full needs a dtype"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "complex64"}], "outputs": [{"name": "x", "node": 0}]}`, `node 0: unknown dtype "complex64"`},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [-3], "dtype": "float64"}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: negative dimensions are not allowed"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64", "chunks": [[2, 2]]}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: chunks [2 2] do not cover axis 0 of length 3"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64", "chunks": [[3, 0]]}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: chunk sizes must be positive, got 0 on axis 0"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64", "attrs": {"seed": 1}}], "outputs": [{"name": "x", "node": 0}]}`, `node 0: full takes no attribute "seed"`},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64", "attrs": {"value": "x"}}], "outputs": [{"name": "x", "node": 0}]}`, `node 0: attrs: "x" is not a number`},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "int64", "attrs": {"value": 1.5}}], "outputs": [{"name": "x", "node": 0}]}`, `node 0: a int64 value goes in "int_value", not "value"`},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64"}, {"id": 1, "op": "negative", "inputs": [0], "shape": [4]}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: shape (4,) does not match the inferred (3,)"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "int32"}, {"id": 1, "op": "sqrt", "inputs": [0], "dtype": "float32"}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: dtype float32 does not match the inferred float64"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64"}, {"id": 1, "op": "negative", "inputs": [0], "chunks": [[3]]}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: negative does not take chunks"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64"}, {"id": 1, "op": "sum", "inputs": [0], "attrs": {"axes": [1]}}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: axis 1 is out of bounds for array of dimension 1"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3, 3], "dtype": "float64"}, {"id": 1, "op": "sum", "inputs": [0], "attrs": {"axes": [1, 0]}}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: sum axes [1 0] are not sorted and distinct"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64"}, {"id": 1, "op": "slice", "inputs": [0], "attrs": {"slices": [[2, 1, 2]]}}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: slice 2:1:2 is out of bounds for axis 0 with size 3"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64"}, {"id": 1, "op": "reshape", "inputs": [0], "shape": [4]}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: cannot reshape array of size 3 into shape (4,)"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64"}, {"id": 1, "op": "rechunk", "inputs": [0]}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: rechunk needs chunks"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64"}, {"id": 1, "op": "concatenate", "inputs": [0, 0]}], "outputs": [{"name": "x", "node": 1}]}`, "node 1: concatenate takes one axis"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [3], "dtype": "float64", "weak": true}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: only scalars can be weak"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "input", "attrs": {"name": "nope"}}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: unknown name nope"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "input", "shape": [4], "attrs": {"name": "a"}}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: input a has shape (4,6), not (4,)"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "randint", "shape": [3], "dtype": "int64", "attrs": {"low": 3, "high": 3}}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: low >= high"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "rand", "shape": [3], "dtype": "float64"}], "outputs": [{"name": "x y", "node": 0}]}`, `output "x y": not a valid name`},
	{`{"version": 1, "nodes": [{"id": 0, "op": "rand", "shape": [3], "dtype": "float64"}], "outputs": [{"name": "x", "node": 0}, {"name": "x", "node": 0}]}`, "output x: named twice"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "rand", "shape": [3], "dtype": "float64"}], "outputs": [{"name": "x", "node": 1}]}`, "output x: no node 1"},
	{`{"version": 1, "nodes": [{"id": -1, "op": "rand", "shape": [3], "dtype": "float64"}], "outputs": [{"name": "x", "node": -1}]}`, "node -1: ids must not be negative"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "rand", "shape": [3], "dtype": "float64"}], "outputs": [{"name": "x", "node": 0}]} {}`, "json: data after the document"},
	{`{"version": 1, "nodes": [{"id": 0, "op": "full", "shape": [1000000000, 1000000000], "dtype": "float64"}], "outputs": [{"name": "x", "node": 0}]}`, "node 0: shape (1000000000,1000000000) is too large"},
}

func TestJSONErrors(t *testing.T) {
	for _, tc := range jsonErrors {
		_, err := spec.ParseJSON([]byte(tc.src), env)
		if err == nil {
			t.Errorf("%s: no error, want %q", tc.src, tc.want)
			continue
		}
		var se *syntax.Error
		if !errors.As(err, &se) || error(se) != err {
			t.Errorf("%s: error is a %T, not a *syntax.Error", tc.src, err)
		}
		if err.Error() != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.src, err.Error(), tc.want)
		}
	}
}
