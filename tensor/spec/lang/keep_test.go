package lang

import (
	"marsfs/tensor/spec"
	"strings"
	"testing"
	"testing/fstest"

	"marsfs/tensor"
)

// keeps are specs with what they keep, write and drop (dumpGraph's form:
// "-> name=node" an output, "=> format path=node" a file written, "del
// name" a session tensor dropped), against a session that keeps a and b
// and an empty data directory; want "error: ..." is Parse's message.
var keeps = []struct{ src, want string }{
	// fetch alone keeps nothing new; fetch lines add up.
	{"x = ones(4)\ny = x * 2\nfetch\n", ``},
	{"x = ones(4)\nfetch\ny = x * 2\nfetch x\n", `
0 full() (4,) float64
-> x=0`},
	{"fetch a\n", `
0 input() (3,) int64
-> a=0`},
	// Without a fetch line, the last name assigned, unless the last
	// statement writes a file.
	{"x = ones(4)\nto_npy(x * 2, \"out.npy\")\n", `
0 full() (4,) float64
1 scalar() () int64 weak
2 multiply(0,1) (4,) float64
=> npy out.npy=2`},
	{"x = ones(4)\nto_zarr(x, \"out.zarr\")\ny = x + 1\n", `
0 full() (4,) float64
1 scalar() () int64 weak
2 add(0,1) (4,) float64
-> y=2
=> zarr out.zarr=0`},
	{"x = ones(4)\nto_zarr(x, \"out.zarr\")\nfetch x\n", `
0 full() (4,) float64
-> x=0
=> zarr out.zarr=0`},
	// del: a name of the spec's is unbound; a session's tensor is dropped
	// when the graph succeeds. A del after a file written still keeps
	// nothing.
	{"x = ones(4)\ny = x + 1\nto_npy(y, \"y.npy\")\ndel x\n", `
0 full() (4,) float64
1 scalar() () int64 weak
2 add(0,1) (4,) float64
=> npy y.npy=2`},
	{"del a, b\n", `
del a
del b`},
	{"c = a + 1\ndel a\n", `
0 input() (3,) int64
1 scalar() () int64 weak
2 add(0,1) (3,) int64
-> c=2
del a`},
	{"x = ones(2)\ny = x + 1\ndel y\n", ``},
	{"a = ones(2)\ndel a\n", `
del a`},
	{"del a\na = ones(3)\n", `
0 full() (3,) float64
-> a=0
del a`},
	{"del b\nfetch\n", `
del b`},
	{"del z\n", "error: 1:5: unknown name z"},
	{"del a\ny = a + 1\n", "error: 2:5: unknown name a (del removed it)"},
	{"del a, a\n", "error: 1:8: unknown name a (del removed it)"},
	{"x = ones(2)\ndel x\nfetch x\n", "error: 3:7: unknown name x (del removed it)"},
	{"fetch\n", "error: 1:1: the spec assigns nothing: write name = expression"},
	{"del\n", "error: 1:1: 'del' is not supported in specs"},
}

func TestKeeps(t *testing.T) {
	env := spec.Env{}
	for _, name := range []string{"a", "b"} {
		env[name] = &tensor.TiledTensor{Name: name, Shape: []int{3}, DType: tensor.Int64, Chunks: [][]int{{3}}, Keys: []uint64{1}}
	}
	data := fstest.MapFS{}
	for _, tc := range keeps {
		g, err := ParseData(tc.src, env, data)
		var got string
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = strings.TrimSpace(dumpGraph(g))
			if len(g.Outputs) > 0 {
				checkGraph(t, tc.src, g)
			}
			// The JSON form keeps them too.
			js, err := g.JSON()
			if err != nil {
				t.Errorf("%q: JSON: %v", tc.src, err)
			} else if len(g.Outputs)+len(g.Sinks)+len(g.Drops) > 0 {
				back, err := ParseData(string(js), env, data)
				if err != nil {
					t.Errorf("%q: JSON %s: %v", tc.src, js, err)
				} else if b := strings.TrimSpace(dumpGraph(back)); b != got {
					t.Errorf("%q: from JSON:\n%s\nwant:\n%s", tc.src, b, got)
				}
			}
		}
		if want := strings.TrimSpace(tc.want); got != want {
			t.Errorf("%q:\n got:\n%s\nwant:\n%s", tc.src, got, want)
		}
	}
}
