package lang

import (
	"errors"
	"marsfs/tensor/spec"
	"math"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// specErrors are bad specs with the exact message Parse gives.
var specErrors = []struct{ src, want string }{
	{"x = frobnicate(3)", "1:5: unknown function frobnicate"},
	{"x = 1\ny = np.frobnicate(x)", "2:5: unknown function np.frobnicate"},
	{"x = coss(ones(3))", "1:5: unknown function coss (did you mean cos?)"},
	{"x = arnage(3)", "1:5: unknown function arnage (did you mean arange?)"},
	{"x = frobnicate(3)", "1:5: unknown function frobnicate"},
	{"x = foo + 1", "1:5: unknown name foo"},
	{"x = (1, 2", "1:5: '(' was never closed"},
	{"x = ones(3))", "1:12: unexpected ')'"},
	{"x = ones(3)\ny = x[1, 2]", "2:6: too many indices for array: array is 1-dimensional, but 2 were indexed"},
	{"x = ones(3)\ny = x[3]", "2:7: index 3 is out of bounds for axis 0 with size 3"},
	{"x = ones(3)\ny = x[-4]", "2:7: index -4 is out of bounds for axis 0 with size 3"},
	{"x = ones(3)\ny = x[::0]", "2:7: slice step cannot be zero"},
	{"x = ones(3)\ny = x[1.5]", "2:7: only integers, slices (`:`), ellipsis (`...`) and None are valid indices, not a float"},
	{"x = ones(3)\ny = x[..., ...]", "2:12: an index can only have a single ellipsis ('...')"},
	{"x = ones(3)\ny = x[x]", "2:7: arrays used as indices must be of integer (or boolean) type, not float64"},
	{"x = ones((3,4)).sum(axis=2)", "1:26: axis 2 is out of bounds for array of dimension 2"},
	{"x = ones((3,4)).sum(axis=(0,0))", "1:26: duplicate value in 'axis'"},
	{"x = ones((3,4)).sum(axis=-3)", "1:26: axis -3 is out of bounds for array of dimension 2"},
	{"x = ones((3,4)).reshape(5)", "1:25: cannot reshape array of size 12 into shape (5,)"},
	{"x = ones((3,4)).reshape(-1, -1)", "1:25: can only specify one unknown dimension"},
	{"x = ones(3).astype('complex64')", "1:20: data type \"complex64\" not understood (marsfs has bool, int8 to int64, uint8 to uint64, float16 to float64)"},
	{"x = ones(3) & ones(3)", "1:13: ufunc 'bitwise_and' not supported for the input types float64 and float64"},
	{"x = ~ones(3)", "1:5: ufunc 'invert' not supported for float64"},
	{"x = arange(3) ** -1", "1:15: Integers to negative integer powers are not allowed."},
	{"x = ones(3, dtype=bool) - ones(3, dtype=bool)", "1:25: numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead"},
	{"x = -ones(3, dtype=bool)", "1:5: the numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead"},
	{"x = 1 / 0", "1:7: division by zero"},
	{"x = 2 ** 64", "1:7: integer overflow: the result does not fit in int64"},
	{"x = rand(10, chunks=0)", "1:21: chunks must be positive (or -1 for a whole axis), got 0"},
	{"x = rand(10, chunks=(5, 5))", "1:21: chunks have 2 entries for the 1 axes of shape (10,)"},
	{"x = rand(10, chunks=((3, 3),))", "1:22: chunks [3 3] sum to 6, not the axis length 10"},
	{"x = rand(-1)", "1:10: negative dimensions are not allowed"},
	{"x = zeros((2, 2.5))", "1:15: 2.5 is not an integer"},
	{"x = randint(5, 5)", "1:5: low >= high"},
	{"x = normal(0, -1, size=3)", "1:15: scale < 0"},
	{"x = sum()", "1:5: sum() missing required argument 'a'"},
	{"x = sum(ones(3), foo=1)", "1:18: sum() got an unexpected keyword argument 'foo'"},
	{"x = sum(ones(3), 0, axis=0)", "1:21: sum() got multiple values for argument 'axis'"},
	{"x = ones(3).sum(0, None, None, False, 7)", "1:39: sum() takes 5 positional arguments but 6 were given"},
	{"x = 3\ny = x(2)", "2:5: 'int' object is not callable"},
	{"x = ones(3)\ny = x.frob()", "2:7: tensors have no method frob"},
	{"x = ones(3)\ny = x.frob", "2:7: tensors have no attribute frob"},
	{"x = ones(3)\nfetch y", "2:7: unknown name y"},
	{"x = ones(3)\nfetch x, x", "2:10: x is fetched twice"},
	{"", "1:1: the spec assigns nothing: write name = expression"},
	{"# nothing\n\n", "1:1: the spec assigns nothing: write name = expression"},
	{"x = ones(3) +* 2", "1:14: unexpected '*'"},
	{"x = 1 < 2 < 3", "1:11: chained comparisons are not supported; use & between parenthesized comparisons"},
	{"x = ones(3) and ones(3)", "1:13: 'and' is not supported; use &, | or ~ (logical_and, logical_or, logical_not)"},
	{"x = ones(3) << ones(3)", "1:13: operator << is not supported"},
	{"x = ones(3) ^ ones(3)", "1:13: ufunc 'bitwise_xor' not supported for the input types float64 and float64"},
	{"ones(3)", "1:1: expression is not assigned to a name (write name = expression)"},
	{"x = y = 3", "1:7: chained assignment is not supported"},
	{"True = 3", "1:1: cannot assign to True"},
	{"x = 'abc", "1:5: unterminated string literal"},
	{"x = 1.5j", "1:5: complex numbers are not supported"},
	{"x = 012", "1:5: leading zeros in decimal integer literals are not permitted"},
	{"x = $", "1:5: unexpected character '$'"},
	{"x = concatenate([ones(3), ones((3,1))])", "1:5: all the input array dimensions except for the concatenation axis must match exactly, but the array at index 0 has 1 dimension(s) and the array at index 1 has 2 dimension(s)"},
	{"x = concatenate([ones((2,3)), ones((2,4))])", "1:5: all the input array dimensions except for the concatenation axis must match exactly, but along dimension 1, the array at index 0 has size 3 and the array at index 1 has size 4"},
	{"x = concatenate([1, 2])", "1:5: zero-dimensional arrays cannot be concatenated"},
	{"x = stack([ones(3), ones(4)])", "1:5: all input arrays must have the same shape"},
	{"x = ones((3,4)).transpose(0, 0)", "1:27: repeated axis in transpose"},
	{"x = ones((3,4)).squeeze(0)", "1:25: cannot select an axis to squeeze out which has size not equal to one"},
	{"x = ones(3) @ 2", "1:13: matmul: Input operand 1 does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)"},
	{"x = ones((2,2,3)) @ ones((2,2))", "1:19: matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 2 is different from 3)"},
	{"x = convolve(ones(2), ones(2))", "1:5: convolve is not supported yet"},
	{"x = np.frexp(ones(2))", "1:5: frexp is not supported yet"},
	{"x = ones(4)\ny = x.partition(2)", "2:5: a.partition() partitions in place and returns None: write partition(a, kth)"},
	{"x = np.convolve(ones(3), ones(3))", "1:5: convolve is not supported yet"},
	{"x = linalg.norm(ones((2,3,3)), 2, axis=(1, 2))", "1:32: linalg.norm of a stack of matrices with ord=2 is not supported yet"},
	{"x = linalg.norm(ones(3), 'fro')", "1:26: Invalid norm order 'fro' for vectors"},
	{"x = linalg.norm(ones((3,3)), 3)", "1:30: Invalid norm order for matrices."},
	{"x = linalg.norm(ones((2,3,3)), 1)", "1:5: Improper number of dimensions to norm."},
	{"x = linalg.svd(ones((3,3)))", "1:1: cannot fetch x: a tuple is not a tensor: make arrays with the creation functions (zeros, arange, ...)"},
	{"u, s, vt = linalg.svd(ones((4,3)), full_matrices=True)", "1:50: linalg.svd: full_matrices=True of a matrix that is not square is not supported (marsfs computes the reduced SVD: pass full_matrices=False)"},
	{"v, c = unique(ones(3), return_counts=True, equal_nan=False)", "1:54: unique(): equal_nan=False is not supported: all NaNs are one value"},
	{"x = sort(ones((2,2,2)), axis=3)", "1:30: axis 3 is out of bounds for array of dimension 3"},
	{"x = ones(3).argsort(kind='fast')", "1:26: sort kind must be one of 'quick', 'heap', or 'stable' (got 'fast')"},
	{"a, b = ones(3)", "1:1: cannot unpack a tensor into 2 names"},
	{"a, b = 1, 2, 3", "1:1: cannot unpack 3 values into 2 names"},
	{"x = zeros(0).max()", "1:14: zero-size array to reduction operation max which has no identity"},
	{"x = tensordot(ones((2,3)), ones((4,5)))", "1:5: shape-mismatch for sum"},
	{"x = ones(3).cumsum(axis=1)", "1:25: axis 1 is out of bounds for array of dimension 1"},
	{"x = ones(3).argmax(axis=(0,))", "1:25: 'tuple' object cannot be interpreted as an integer"},
	{"x = clip(ones(3))", "1:5: One of max or min must be given"},
	{"x = where(ones(3) > 0)", "1:1: cannot fetch x: a tuple is not a tensor: make arrays with the creation functions (zeros, arange, ...)"},
	{"x = ones(3, dtype=int32) + 1.5j", "1:28: complex numbers are not supported"},
	{"x = ones(3)\nx += ones(4)", "2:3: operands could not be broadcast together with shapes (3,) (4,)"},
	{"x = rand(1e12, chunks=1)", "1:23: chunks of 1 cut an axis of length 1000000000000 into 1000000000000 chunks, more than the 2147483647 this server has the memory for: use larger chunks"},
	{"x = zeros((1e9, 1e9))", "1:11: shape (1000000000,1000000000) is too large"},
	{"x = ones(3) + 'a'", "1:13: unsupported operand type(s) for +: 'tensor' and 'str'"},
	{"x = 'a' + 1", "1:9: unsupported operand type(s) for +: 'str' and 'int'"},
	{"x = ones(3).var(ddof=-1)", "1:22: ddof must not be negative"},
	{"x = eye(3, dtype='float128')", "1:18: data type \"float128\" not understood (marsfs has bool, int8 to int64, uint8 to uint64, float16 to float64)"},
	{"x = full(3, 1e10, dtype=int32)", "1:5: fill value 10000000000.0 is out of bounds for int32"},
	{"x = full(3, nan, dtype=int64)", "1:5: cannot convert float nan to integer"},
	{"x = arange(0, 10, 0)", "1:19: arange: step must not be zero"},
	{"x = linspace(0, 1, -1)", "1:20: Number of samples, -1, must be non-negative."},
	{"x = rand(3, seed=-1)", "1:18: seed must be non-negative, got -1"},
	{"x = ones(3)[1:2:3:4]", "1:18: unexpected ':'"},
	{"x = ones(3)[]", "1:13: empty subscript"},
	{"x = f(*a)", "1:7: argument unpacking is not supported"},
	{"x = ones(3).shape + 1", "1:19: unsupported operand type(s) for +: 'tuple' and 'int'"},
	{"x = ones(3)\ny = x[1:2, 0]", "2:6: too many indices for array: array is 1-dimensional, but 2 were indexed"},
	{"x = ones(3).shape[3]", "1:19: tuple index out of range"},
	{"x = ones((2,3))\ny = x[0][5]", "2:10: index 5 is out of bounds for axis 0 with size 3"},
	{"x = rand(10)\ny = x +\n", "2:8: unexpected end of line: expected an expression"},
	{"fetch = 3\nfetch fetch, y", "2:14: unknown name y"},
	{"x = ones(3)\nx.y = 2", "2:5: cannot assign to expression"},
	{"x = 99999999999999999999", "1:5: integer literal 99999999999999999999 is too large"},
	{"x = 1e", "1:5: invalid float literal \"1e\""},
	{"x = 1__0", "1:5: invalid number literal \"1__0\""},
	{"x = \xff", "1:5: invalid UTF-8 in spec"},
	{"x = ones(3) \\ 2", "1:13: unexpected character after line continuation character"},
	{"x = ones(3)[None, None, 5]", "1:25: index 5 is out of bounds for axis 0 with size 3"},
	{"x = ones((3, 4), chunks=(2, -2))", "1:29: chunks must be positive (or -1 for a whole axis), got -2"},
	{"x = ones((3, 4)).rechunk()", "1:18: rechunk() missing required argument 'chunks'"},
	{"x = ones((3, 4)).rechunk('big')", "1:26: chunks \"big\" not understood: give an int, a tuple, or \"auto\""},
	{"x = ones(3)\ny = x[0:1:2:3]", "2:12: unexpected ':'"},
	{"x = sum", "1:5: sum is a function: call it, sum(...)"},
	{"x = np.sum", "1:5: np.sum is a function: call it, np.sum(...)"},
	{"x = np.frob", "1:5: unknown name np.frob"},
	{"x = ones(3).sum", "1:13: sum is a method: call it, .sum(...)"},
	{"x = (1).sum()", "1:9: 'int' object has no method sum"},
	{"x = 1 & 2.5", "1:7: unsupported operand type(s) for &: 'int' and 'float'"},
	{"x = 0.0 ** -1", "1:9: 0.0 cannot be raised to a negative power"},
	{"x = (-8) ** 0.5", "1:10: a negative number to a fractional power is complex, which marsfs does not support"},
	{"x = 7 // 0", "1:7: integer division or modulo by zero"},
	{"x = ~1.5", "1:5: bad operand type for unary ~: 'float'"},
	{"x = -'a'", "1:5: bad operand type for unary -: 'str'"},
	{"x = ones(3).astype()", "1:13: astype() missing required argument 'dtype'"},
	{"x = ones(3).astype(3)", "1:20: a int is not a dtype"},
	{"x = randint(10, dtype=float64)", "1:23: Unsupported dtype float64 for randint"},
	{"x = cumsum(ones(3), out=ones(3))", "1:25: cumsum(): out= is not supported"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range specErrors {
		_, err := ParseText(tc.src, nil)
		if err == nil {
			t.Errorf("%q: no error, want %q", tc.src, tc.want)
			continue
		}
		var se *syntax.Error
		if !errors.As(err, &se) || error(se) != err {
			t.Errorf("%q: error is a %T, not a *syntax.Error", tc.src, err)
		}
		if err.Error() != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.src, err.Error(), tc.want)
		}
	}
}

// lowered are specs with the graph they lower to (dumpGraph's form).
var lowered = []struct{ src, want string }{
	{"x = clip(arange(5), 1, 3)", `
0 arange() (5,) int64
1 scalar() () int64 weak
2 maximum(0,1) (5,) int64
3 scalar() () int64 weak
4 minimum(2,3) (5,) int64
-> x=4`},
	{"x = clip(ones(5), None, 0.5)", `
0 full() (5,) float64
1 scalar() () float64 weak
2 minimum(0,1) (5,) float64
-> x=2`},
	{"x = stack([ones(3), zeros(3)], axis=1)", `
0 full() (3,) float64
1 full() (3,) float64
2 reshape(0) (3,1) float64
3 reshape(1) (3,1) float64
4 concatenate(2,3) (3,2) float64
-> x=4`},
	{"x = outer(arange(3), ones(2))", `
0 arange() (3,) int64
1 full() (2,) float64
2 reshape(0) (3,1) int64
3 reshape(1) (1,2) float64
4 multiply(2,3) (3,2) float64
-> x=4`},
	{"a = ones(4)\nx = a @ a", `
0 full() (4,) float64
1 reshape(0) (1,4) float64
2 reshape(0) (4,1) float64
3 matmul(1,2) (1,1) float64
4 reshape(3) () float64
-> x=4`},
	{"x = tensordot(ones((2,3,4)), ones((4,3)), axes=([1,2],[1,0]))", `
0 full() (2,3,4) float64
1 full() (4,3) float64
2 reshape(0) (2,12) float64
3 transpose(1) (3,4) float64
4 reshape(3) (12,1) float64
5 matmul(2,4) (2,1) float64
6 reshape(5) (2,) float64
-> x=6`},
	{"x = ones((2,3)).cumsum()", `
0 full() (2,3) float64
1 reshape(0) (6,) float64
2 cumsum(1) (6,) float64
-> x=2`},
	{"x = ones((2,1,3)).squeeze().T", `
0 full() (2,1,3) float64
1 reshape(0) (2,3) float64
2 transpose(1) (3,2) float64
-> x=2`},
	{"x = ones((4,5))[1, ::2]", `
0 full() (4,5) float64
1 slice(0) (1,3) float64
2 reshape(1) (3,) float64
-> x=2`},
	{"x = ones((4,5))[:, :]\ny = x[None]", `
0 full() (4,5) float64
1 reshape(0) (1,4,5) float64
-> y=1`},
	{"x = linalg.norm(ones(3), 3)", `
0 full() (3,) float64
1 abs(0) (3,) float64
2 scalar() () float64 weak
3 power(1,2) (3,) float64
4 sum(3) () float64
5 scalar() () float64
6 power(4,5) () float64
-> x=6`},
	{"x = linalg.norm(ones((3, 4)))", `
0 full() (3,4) float64
1 multiply(0,0) (3,4) float64
2 sum(1) () float64
3 sqrt(2) () float64
-> x=3`},
	{"x = arange(3, dtype=int32).sum(dtype=float32)", `
0 arange() (3,) int32
1 astype(0) (3,) float32
2 sum(1) () float32
-> x=2`},
	{"x = ones(3)\ny = rand(3)\nz = x + 1\nfetch x", `
0 full() (3,) float64
-> x=0`},
	{"x = ones(3)\nx = x * 2\nx += 1", `
0 full() (3,) float64
1 scalar() () int64 weak
2 multiply(0,1) (3,) float64
3 scalar() () int64 weak
4 add(2,3) (3,) float64
-> x=4`},
	{"a, b = ones(2), zeros(3)\nfetch b, a", `
0 full() (2,) float64
1 full() (3,) float64
-> b=1
-> a=0`},
	{"x = 2 ** 10 - 1\ny = x * 2.5", `
0 scalar() () float64 weak
-> y=0`},
	{"import_ = ones(3)", `
0 full() (3,) float64
-> import_=0`},
	{"x = (ones(3) +\n     ones(3))  # implicit joining\ny = x \\\n  * 2; z = y", `
0 full() (3,) float64
1 full() (3,) float64
2 add(0,1) (3,) float64
3 scalar() () int64 weak
4 multiply(2,3) (3,) float64
-> z=4`},
}

func TestParseLowering(t *testing.T) {
	for _, tc := range lowered {
		g, err := ParseText(tc.src, nil)
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		got := strings.TrimSpace(dumpGraph(g))
		if want := strings.TrimSpace(tc.want); got != want {
			t.Errorf("%q:\n got:\n%s\nwant:\n%s", tc.src, got, want)
		}
		if g.Source != tc.src {
			t.Errorf("%q: Source is %q", tc.src, g.Source)
		}
		checkGraph(t, tc.src, g)
	}
}

// parseOut parses src and returns the node of its first output.
func parseOut(t *testing.T, src string) *spec.Node {
	t.Helper()
	g, err := ParseText(src, nil)
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	checkGraph(t, src, g)
	return g.Outputs[0].Node
}

func TestParseAttrs(t *testing.T) {
	n := parseOut(t, "x = arange(10)[8:1:-3]")
	if want := []tensor.Slice{{Start: 8, Step: -3, Len: 3}}; !equalSlices(n.Attrs.Slices, want) {
		t.Errorf("[8:1:-3]: %v, want %v", n.Attrs.Slices, want)
	}
	n = parseOut(t, "x = ones((5, 6))[-2:, 100:]")
	if want := []tensor.Slice{{Start: 3, Step: 1, Len: 2}, {Start: 0, Step: 1, Len: 0}}; !equalSlices(n.Attrs.Slices, want) {
		t.Errorf("[-2:, 100:]: %v, want %v", n.Attrs.Slices, want)
	}
	n = parseOut(t, "x = ones((2, 3, 4)).sum(axis=(2, -3), keepdims=True)")
	if !slices.Equal(n.Attrs.Axes, []int{0, 2}) || !n.Attrs.Keepdims || !slices.Equal(n.Shape, []int{1, 3, 1}) {
		t.Errorf("sum(axis=(2,-3)): axes %v keepdims %v shape %v", n.Attrs.Axes, n.Attrs.Keepdims, n.Shape)
	}
	n = parseOut(t, "x = ones((2, 3)).std(ddof=1)")
	if n.Op != tensor.OpStd || n.Attrs.Ddof != 1 || n.Attrs.Axes != nil {
		t.Errorf("std(ddof=1): %s ddof %d axes %v", n.Op, n.Attrs.Ddof, n.Attrs.Axes)
	}
	n = parseOut(t, "x = linspace(0, 1, 5)")
	if n.Attrs.Start != 0 || n.Attrs.Step != 0.25 {
		t.Errorf("linspace(0, 1, 5): start %v step %v", n.Attrs.Start, n.Attrs.Step)
	}
	n = parseOut(t, "x = linspace(0, 1, 4, endpoint=False)")
	if n.Attrs.Step != 0.25 {
		t.Errorf("linspace(0, 1, 4, endpoint=False): step %v", n.Attrs.Step)
	}
	n = parseOut(t, "x = arange(1, 2, 0.25)")
	if n.Attrs.Start != 1 || n.Attrs.Step != 0.25 || n.Shape[0] != 4 || n.DType != tensor.Float64 {
		t.Errorf("arange(1, 2, 0.25): %+v %v %s", n.Attrs, n.Shape, n.DType)
	}
	n = parseOut(t, "x = full((2, 2), 7, dtype=int32)")
	if n.Attrs.IntValue != 7 || n.Attrs.Value != 0 || n.DType != tensor.Int32 {
		t.Errorf("full 7 int32: %+v %s", n.Attrs, n.DType)
	}
	n = parseOut(t, "x = full(2, -inf)")
	if !math.IsInf(n.Attrs.Value, -1) {
		t.Errorf("full -inf: %+v", n.Attrs)
	}
	n = parseOut(t, "x = ones(2, dtype=bool)")
	if n.Attrs.IntValue != 1 || n.DType != tensor.Bool {
		t.Errorf("ones bool: %+v %s", n.Attrs, n.DType)
	}
	n = parseOut(t, "x = eye(3, 5, k=-1, dtype=int64)")
	if n.Attrs.K != -1 || !slices.Equal(n.Shape, []int{3, 5}) || n.DType != tensor.Int64 {
		t.Errorf("eye: %+v %v %s", n.Attrs, n.Shape, n.DType)
	}
	n = parseOut(t, "x = randint(3, 9, size=(2, 2), seed=5)")
	if n.Attrs.Low != 3 || n.Attrs.High != 9 || n.Attrs.Seed != 5 || n.DType != tensor.Int64 {
		t.Errorf("randint: %+v %s", n.Attrs, n.DType)
	}
	n = parseOut(t, "x = np.random.normal(2, 0.5, size=4, seed=1)")
	if n.Op != tensor.OpNormal || n.Attrs.Start != 2 || n.Attrs.Step != 0.5 {
		t.Errorf("normal: %s %+v", n.Op, n.Attrs)
	}
	n = parseOut(t, "x = uniform(-1, 1, 10)")
	if n.Op != tensor.OpUniform || n.Attrs.Start != -1 || n.Attrs.Step != 1 {
		t.Errorf("uniform: %s %+v", n.Op, n.Attrs)
	}
	n = parseOut(t, "x = ones((2, 3, 4)).transpose(2, 0, 1)")
	if !slices.Equal(n.Attrs.Perm, []int{2, 0, 1}) || !slices.Equal(n.Shape, []int{4, 2, 3}) {
		t.Errorf("transpose: %v %v", n.Attrs.Perm, n.Shape)
	}
	n = parseOut(t, "x = around(ones(3), 2)")
	if n.Op != tensor.OpRound || n.Attrs.Decimals != 2 {
		t.Errorf("around: %s %+v", n.Op, n.Attrs)
	}
	n = parseOut(t, "x = 2 ** 40 + ones(3, dtype=int32)")
	if s := n.Inputs[0]; s.Op != tensor.OpScalar || !s.Weak || s.Attrs.IntValue != 1<<40 || n.DType != tensor.Int64 {
		t.Errorf("2**40 + int32: %+v %s", s, n.DType)
	}
	n = parseOut(t, "x = -2**2 + zeros(1)")
	if s := n.Inputs[0]; s.Attrs.IntValue != -4 {
		t.Errorf("-2**2 folds to %d, want -4", s.Attrs.IntValue)
	}
	n = parseOut(t, "x = 2**3**2 + 7 // -2 + 7 % -3 + zeros(1)")
	// Python: 2**9 + (-4) + (-2) = 506
	if s := n.Inputs[0]; s.Attrs.IntValue != 506 {
		t.Errorf("2**3**2 + 7//-2 + 7%%-3 folds to %d, want 506", s.Attrs.IntValue)
	}
	n = parseOut(t, "x = zeros(1) + (1 | 2 & 3 == 3)")
	if s := n.Inputs[1]; s.DType != tensor.Bool || s.Attrs.IntValue != 1 {
		t.Errorf("1 | 2 & 3 == 3 folds to %+v, want True", s)
	}
}

func equalSlices(a, b []tensor.Slice) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseChunks(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want [][]int
	}{
		{"x = rand(10, chunks=4)", [][]int{{4, 4, 2}}},
		{"x = rand(10, chunks=1e1)", [][]int{{10}}},
		{"x = ones((4, 6), chunks=(3, -1))", [][]int{{3, 1}, {6}}},
		{"x = ones((4, 6), chunks=(None, 4))", [][]int{{4}, {4, 2}}},
		{"x = ones((4, 6), chunks=5)", [][]int{{4}, {5, 1}}},
		{"x = ones((4, 6), chunks=((1, 3), 2))", [][]int{{1, 3}, {2, 2, 2}}},
		{"x = ones((4, 6), chunks=-1)", [][]int{{4}, {6}}},
		{"x = ones(0)", [][]int{{0}}},
		{"x = ones((0, 3), chunks=2)", [][]int{{0}, {2, 1}}},
		{"x = ones((0, 3))", [][]int{{0}, {3}}},
		{"x = ones(())", [][]int{}},
		{"x = ones(10).rechunk(3)", [][]int{{3, 3, 3, 1}}},
		{"x = rechunk(ones((4, 4)), (2, 4))", [][]int{{2, 2}, {4}}},
		{"x = ones(3).rechunk('auto')", [][]int{{3}}},
	} {
		n := parseOut(t, tc.src)
		if !slices.EqualFunc(n.Chunks, tc.want, slices.Equal) {
			t.Errorf("%s: chunks %v, want %v", tc.src, n.Chunks, tc.want)
		}
	}
}

func TestParseSeeds(t *testing.T) {
	g, err := ParseText("x = rand(10)\ny = rand(10)\nfetch x, y", nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Nodes[0].Attrs.Seed == g.Nodes[1].Attrs.Seed {
		t.Errorf("two unseeded generators share seed %d", g.Nodes[0].Attrs.Seed)
	}
	n := parseOut(t, "x = randn(2, 3, seed=42)")
	if n.Attrs.Seed != 42 || !slices.Equal(n.Shape, []int{2, 3}) {
		t.Errorf("randn(2, 3, seed=42): seed %d shape %v", n.Attrs.Seed, n.Shape)
	}
	n = parseOut(t, "x = random.rand((2, 3), seed=0)")
	if n.Attrs.Seed != 0 || !slices.Equal(n.Shape, []int{2, 3}) {
		t.Errorf("random.rand((2, 3)): seed %d shape %v", n.Attrs.Seed, n.Shape)
	}
	n = parseOut(t, "x = rand()")
	if len(n.Shape) != 0 {
		t.Errorf("rand(): shape %v", n.Shape)
	}
}

// testEnv is a session with tensors a (float32, 4x6 in 2x3 chunks) and
// k (int64 scalar).
type testEnv = spec.Env

var env = testEnv{
	"a": {Name: "a", Shape: []int{4, 6}, DType: tensor.Float32, Chunks: [][]int{{2, 2}, {3, 3}}, Keys: []uint64{1, 2, 3, 4}},
	"k": {Name: "k", Shape: []int{}, DType: tensor.Int64, Chunks: [][]int{}, Keys: []uint64{5}},
}

func TestParseEnv(t *testing.T) {
	g, err := ParseText("b = a * 2 + a.sum(axis=0)\nc = k + 1\nfetch b, c", env)
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, "env", g)
	inputs := 0
	for _, n := range g.Nodes {
		if n.Op == tensor.OpInput {
			inputs++
			if n.Attrs.Name == "a" && (!slices.EqualFunc(n.Chunks, env["a"].Chunks, slices.Equal) || n.DType != tensor.Float32) {
				t.Errorf("input a: %v %s", n.Chunks, n.DType)
			}
		}
	}
	if inputs != 2 {
		t.Errorf("%d input nodes, want 2 (one per name)", inputs)
	}
	if b := g.Outputs[0].Node; b.DType != tensor.Float32 || !slices.Equal(b.Shape, []int{4, 6}) {
		t.Errorf("b: %s %v", b.DType, b.Shape)
	}
	// A spec's own names shadow the session's.
	g, err = ParseText("a = ones(2)\nb = a + 1", env)
	if err != nil {
		t.Fatal(err)
	}
	if g.Nodes[0].Op != tensor.OpFull {
		t.Errorf("a spec's name a did not shadow the session's: %s", g.Nodes[0].Op)
	}
	if _, err := ParseText("b = a + 1", nil); err == nil || err.Error() != "1:5: unknown name a" {
		t.Errorf("without env: %v", err)
	}
	if _, err := ParseText("b = a(1)", env); err == nil || err.Error() != "1:5: a is a tensor, not a function" {
		t.Errorf("calling a session tensor: %v", err)
	}
}

func TestParseSpecDispatch(t *testing.T) {
	g, err := Parse("x = ones(3)", nil)
	if err != nil || g.Nodes[0].Op != tensor.OpFull {
		t.Fatalf("text: %v", err)
	}
	doc, err := g.JSON()
	if err != nil {
		t.Fatal(err)
	}
	g2, err := Parse("  \n"+string(doc), nil)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	if dumpGraph(g2) != dumpGraph(g) {
		t.Errorf("ParseSpec of JSON:\n%s\nwant\n%s", dumpGraph(g2), dumpGraph(g))
	}
}
