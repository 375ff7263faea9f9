package syntax

import (
	"strconv"

	"marsfs/tensor"
)

// A PyNum is a Python number of a spec: a literal, or arithmetic on
// literals, which the parser folds as Python would (2**20 is an int, 1/4 a
// float). Its dtype is Bool, Int64 or Float64. Where it meets a tensor it
// becomes a Weak OpScalar node.
type PyNum struct {
	Dt tensor.DType
	I  int64 // Bool (0 or 1) and Int64
	F  float64
}

func PyInt(i int64) PyNum     { return PyNum{Dt: tensor.Int64, I: i} }
func PyFloat(f float64) PyNum { return PyNum{Dt: tensor.Float64, F: f} }
func PyBool(b bool) PyNum {
	if b {
		return PyNum{Dt: tensor.Bool, I: 1}
	}
	return PyNum{Dt: tensor.Bool}
}

func (n PyNum) IsFloat() bool { return n.Dt == tensor.Float64 }

func (n PyNum) Float() float64 {
	if n.IsFloat() {
		return n.F
	}
	return float64(n.I)
}

// String renders n as Python's repr does (True, 3, 2.5, 1e+300, inf).
func (n PyNum) String() string {
	switch n.Dt {
	case tensor.Bool:
		if n.I != 0 {
			return "True"
		}
		return "False"
	case tensor.Int64:
		return strconv.FormatInt(n.I, 10)
	}
	return tensor.FormatPyFloat(n.F)
}

func (n PyNum) TypeName() string {
	switch n.Dt {
	case tensor.Bool:
		return "bool"
	case tensor.Int64:
		return "int"
	}
	return "float"
}
