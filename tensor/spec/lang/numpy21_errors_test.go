package lang

import (
	"errors"
	"testing"

	"marsfs/tensor/spec/syntax"
)

// numpyErrors are bad uses of the functions of issue 21: each is refused
// at parse time with a spec error naming the place and the fault.
var numpyErrors = []struct{ src, want string }{
	{"x = ones(3)\ny = x[ones(4) > 0]", "2:15: boolean index did not match indexed array along dimension 0; dimension is 3 but corresponding boolean dimension is 4"},
	{"x = ones((2, 3))\ny = x[ones((2, 3, 4)) > 0]", "2:23: too many indices for array: array is 2-dimensional, but 3 were indexed"},
	{"x = ones((2, 3))\ny = x[:, x[0] > 0, 0]", "2:15: too many indices for array: array is 2-dimensional, but 3 were indexed"},
	{"x = ones((2, 3))\ny = x[:, :, x[0] > 0]", "2:18: too many indices for array: array is 2-dimensional, but 3 were indexed"},
	{"x = ones((2, 3))\ny = x[x[0, 0] > 0, 1]", "2:15: a 0-d boolean index is not supported yet"},
	{"x = ones(3)\ny = x[x > 0].shape", "2:14: .shape of an array of shape (?,): its length depends on the data, which the spec cannot read"},
	{"x = diff(ones(3), n=-1)", "1:21: order must be non-negative but got -1"},
	{"x = diff(ones((2, 3)), prepend=ones(2))", "1:5: axis 1 is out of bounds for array of dimension 1"},
	{"x = diff(ones(()))", "1:10: diff requires input that is at least one dimensional"},
	{"x = ptp(ones(3) > 0)", "1:5: numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead"},
	{"x = average(ones((3, 4)), weights=ones(4))", "1:35: Axis must be specified when shapes of a and weights differ."},
	{"x = average(ones((3, 4)), axis=0, weights=ones(4))", "1:43: Length of weights not compatible with specified axis."},
	{"x = average(ones((3, 4)), axis=0, weights=ones((2, 2)))", "1:43: 1D weights expected when shapes of a and weights differ."},
	{"x = cov(ones((2, 3, 4)))", "1:9: m has more than 2 dimensions"},
	{"x = cov(ones((2, 3)), aweights=ones(4))", "1:32: incompatible numbers of samples and aweights"},
	{"x = cov(ones((2, 3)), fweights=ones((3, 1)))", "1:32: cannot handle multidimensional fweights"},
	{"x = corrcoef(ones((2, 3)), ddof=1)", "1:33: corrcoef(): ddof has no effect and is deprecated: leave it out"},
	{"x = quantile(ones(5), 1.5)", "1:23: Quantiles must be in the range [0, 1]"},
	{"x = percentile(zeros(0), 50)", "1:16: cannot do a non-empty take from an empty axes."},
	{"x = nanmedian(ones((3, 4, 2)), axis=3)", "1:37: axis 3 is out of bounds for array of dimension 3"},
	{"x = nan_to_num(ones(3), copy=False)", "1:30: nan_to_num(): copy=False changes x in place, which specs cannot do"},
	{"x = isclose(ones(3), ones(4))", "1:5: operands could not be broadcast together with shapes (3,) (4,)"},
	{"x = arctan2(ones(3))", "1:5: arctan2() missing required argument 'x2'"},
	{"x = flip(ones(3), axis=1)", "1:24: axis 1 is out of bounds for array of dimension 1"},
	{"x = fliplr(ones(3))", "1:12: Input must be >= 2-d."},
	{"x = roll(ones(3), (1, 2))", "1:19: roll(): a tuple of shifts needs a tuple of axes"},
	{"x = roll(ones((2, 2)), (1, 2), axis=(0, 1, 1))", "1:24: 'shift' and 'axis' should be scalars or 1D sequences"},
	{"x = vstack(ones(3))", "1:12: vstack() takes a tuple or list of tensors, not a tensor"},
	{"x = hstack((ones((2, 2)), ones(2)))", "1:12: all the input array dimensions except for the concatenation axis must match exactly, but along dimension 0, the array at index 0 has 2 dimension(s) and the array at index 1 has 1 dimension(s)"},
	{"x = triu(ones(()))", "1:10: triu() of a 0-d array: it needs at least one axis"},
	{"x = diag(ones((2, 2, 2)))", "1:10: Input must be 1- or 2-d."},
	{"x = trace(ones(3))", "1:11: diag requires an array of at least two dimensions"},
	{"x = trace(ones((3, 3)), axis1=1, axis2=1)", "1:40: axis1 and axis2 cannot be the same"},
	{"x = repeat(ones(3), -1)", "1:21: negative dimensions are not allowed"},
	{"x = repeat(ones(3), [1, 2])", "1:21: operands could not be broadcast together with shape (3,) (2,)"},
	{"x = tile(ones(3), (2, -1))", "1:19: negative dimensions are not allowed"},
	{"x = compress(ones(4) > 0, ones(3))", "1:22: compress(): a condition longer than the axis (4 > 3) is not supported"},
	{"x = compress(ones((2, 2)) > 0, ones(3))", "1:27: condition must be a 1-d array"},
	{"x = extract(ones(4) > 0, ones(3))", "1:21: extract(): condition has 4 elements, arr 3: they must have as many"},
	{"x = nonzero(ones(()))", "1:5: nonzero of a 0-d array is not supported (NumPy deprecates it): use atleast_1d"},
	{"x = ones(3)\ny = x[x > 0]\nz = argwhere(y)", "3:5: argwhere() of an array of shape (?,): its length depends on the data; fetch it first"},
	{"x = einsum(ones(3))", "1:12: einsum(): the first argument must be a subscripts string such as 'ij,jk->ik'"},
	{"x = einsum('ij')", "1:12: No input operands"},
	{"x = einsum('ij,jk', ones((2, 3)))", "1:12: more operands provided to einstein sum function than specified in the subscripts string"},
	{"x = einsum('ij,jk', ones((2, 3)), ones((2, 3)))", "1:12: operands could not be broadcast together with remapped shapes [original->remapped]: size of 'j' is 3 and 2"},
	{"x = einsum('i.j', ones((3, 2)))", "1:12: einstein sum subscripts string contains a '.' that is not part of an ellipsis ('...')"},
	{"x = einsum('ij...', ones(3))", "1:12: einstein sum subscripts string contains too many subscripts for operand 0"},
	{"x = einsum('ij->k', ones((2, 3)))", "1:12: einstein sum subscripts string included output subscript 'k' which never appeared in an input"},
	{"x = einsum('ii,i', ones((2, 2)), ones(2))", "1:12: einsum(): a letter repeated within one of several operands ('ii') is not supported"},
	{"x = einsum('ij', ones(3))", "1:18: operand has more dimensions than subscripts given in einstein sum, but no '...' ellipsis provided to broadcast the extra dimensions."},
	{"w, v = linalg.eigh(ones((2, 3)))", "1:8: Last 2 dimensions of the array must be square"},
	{"w, v = linalg.eigh(ones((2, 2)), UPLO='X')", "1:39: UPLO argument must be 'L' or 'U'"},
	{"x, r, k, s = linalg.lstsq(ones((2, 3)), ones(2))", "1:27: linalg.lstsq(): an underdetermined system (2 rows < 3 columns) is not supported"},
	{"x, r, k, s = linalg.lstsq(ones((4, 3)), ones(2))", "1:41: Incompatible dimensions"},
	{"x = searchsorted(ones((2, 2)), 1)", "1:5: object too deep for desired array: searchsorted takes a 1-D array, not 2-D"},
	{"x = searchsorted(ones(3), 1, side='middle')", "1:35: side must be 'left' or 'right' (got 'middle')"},
	{"x = searchsorted(ones(3), 1, sorter=arange(2))", "1:37: sorter.size must equal a.size"},
	{"x = digitize(ones(3), ones((2, 2)))", "1:23: bins must be 1-dimensional"},
	{"x = array([[1, 2], [3]])", "1:20: setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions"},
	{"x = array([ones(2), ones(2)])", "1:12: an array of tensors: join them with stack or concatenate"},
	{"x = array([1, 2], order='F')", "1:25: array(): order= is not supported"},
	{"x = ones(3)[[0, 1], [1]]", "1:13: too many indices for array: array is 1-dimensional, but 2 were indexed"},
	{"x = ones((3, 2))\ny = x[arange(2), arange(3)]", "2:7: shape mismatch: indexing arrays could not be broadcast together with shapes (2,) (3,)"},
	{"x = ones((3, 2))\ny = x[arange(2), 0.5]", "2:18: only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices, not a float"},
	{"x = ones(3)\ny = x[x > 0]\nz = take(y, arange(2), mode='wrap')", "3:5: take(mode='wrap') from an array of shape (?,), whose length depends on the data, is not supported yet"},
	{"x = take(ones(3), arange(2), mode='bounce')", "1:35: clipmode must be one of 'clip', 'raise', or 'wrap' (got 'bounce')"},
	{"x = take(ones(3), ones(2))", "1:5: arrays used as indices must be of integer (or boolean) type, not float64"},
	{"x = take(ones(3), arange(2), axis=1)", "1:35: axis 1 is out of bounds for array of dimension 1"},
}

func TestNumpyErrors(t *testing.T) {
	for _, tc := range numpyErrors {
		_, err := ParseText(tc.src, nil)
		if err == nil {
			t.Errorf("%q: no error, want %q", tc.src, tc.want)
			continue
		}
		var se *syntax.Error
		if !errors.As(err, &se) {
			t.Errorf("%q: error is a %T, not a spec error", tc.src, err)
		}
		if err.Error() != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.src, err.Error(), tc.want)
		}
	}
}
