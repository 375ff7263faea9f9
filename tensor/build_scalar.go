package tensor

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// A pyNum is a Python number of a spec: a literal, or arithmetic on
// literals, which the parser folds as Python would (2**20 is an int, 1/4 a
// float). Its dtype is Bool, Int64 or Float64. Where it meets a tensor it
// becomes a Weak OpScalar node.
type pyNum struct {
	dt DType
	i  int64 // Bool (0 or 1) and Int64
	f  float64
}

func pyInt(i int64) pyNum     { return pyNum{dt: Int64, i: i} }
func pyFloat(f float64) pyNum { return pyNum{dt: Float64, f: f} }
func pyBool(b bool) pyNum {
	if b {
		return pyNum{dt: Bool, i: 1}
	}
	return pyNum{dt: Bool}
}

func (n pyNum) isFloat() bool { return n.dt == Float64 }

func (n pyNum) float() float64 {
	if n.isFloat() {
		return n.f
	}
	return float64(n.i)
}

// String renders n as Python's repr does (True, 3, 2.5, 1e+300, inf).
func (n pyNum) String() string {
	switch n.dt {
	case Bool:
		if n.i != 0 {
			return "True"
		}
		return "False"
	case Int64:
		return strconv.FormatInt(n.i, 10)
	}
	return pyFloatString(n.f)
}

// pyFloatString formats f as Python's repr does.
func pyFloatString(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	case f == math.Trunc(f) && math.Abs(f) < 1e16:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func (n pyNum) typeName() string {
	switch n.dt {
	case Bool:
		return "bool"
	case Int64:
		return "int"
	}
	return "float"
}

var errOverflow = fmt.Errorf("integer overflow: the result does not fit in int64")

// foldBinary computes x op y on Python numbers.
func foldBinary(op string, x, y pyNum) (pyNum, error) {
	switch op {
	case "==", "!=", "<", "<=", ">", ">=":
		return pyBool(compareNums(op, x, y)), nil
	case "&", "|":
		if x.isFloat() || y.isFloat() {
			return pyNum{}, fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, x.typeName(), y.typeName())
		}
		r := x.i & y.i
		if op == "|" {
			r = x.i | y.i
		}
		if x.dt == Bool && y.dt == Bool {
			return pyBool(r != 0), nil
		}
		return pyInt(r), nil
	case "@":
		return pyNum{}, fmt.Errorf("unsupported operand type(s) for @: '%s' and '%s'", x.typeName(), y.typeName())
	}
	if x.isFloat() || y.isFloat() || op == "/" {
		return foldFloat(op, x, y)
	}
	a, b := x.i, y.i
	switch op {
	case "+":
		r := a + b
		if (r > a) != (b > 0) {
			return pyNum{}, errOverflow
		}
		return pyInt(r), nil
	case "-":
		r := a - b
		if (r < a) != (b > 0) {
			return pyNum{}, errOverflow
		}
		return pyInt(r), nil
	case "*":
		hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
		if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
			return pyNum{}, errOverflow
		}
		return pyInt(a * b), nil
	case "//", "%":
		if b == 0 {
			return pyNum{}, fmt.Errorf("integer division or modulo by zero")
		}
		if a == math.MinInt64 && b == -1 {
			return pyNum{}, errOverflow
		}
		q, r := a/b, a%b
		if r != 0 && (r < 0) != (b < 0) {
			q--
			r += b
		}
		if op == "//" {
			return pyInt(q), nil
		}
		return pyInt(r), nil
	case "**":
		if b < 0 {
			return foldFloat(op, x, y)
		}
		r := int64(1)
		for i := int64(0); i < b; i++ {
			next, err := foldBinary("*", pyInt(r), pyInt(a))
			if err != nil {
				return pyNum{}, err
			}
			r = next.i
			if r == 0 || r == 1 {
				break
			}
			if r == -1 {
				if (b-i-1)%2 == 1 {
					r = 1 // the remaining odd number of factors of -1
				}
				break
			}
		}
		return pyInt(r), nil
	}
	return pyNum{}, fmt.Errorf("unsupported operator %s", op)
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func foldFloat(op string, x, y pyNum) (pyNum, error) {
	a, b := x.float(), y.float()
	switch op {
	case "+":
		return pyFloat(a + b), nil
	case "-":
		return pyFloat(a - b), nil
	case "*":
		return pyFloat(a * b), nil
	case "/":
		if b == 0 {
			return pyNum{}, fmt.Errorf("division by zero")
		}
		return pyFloat(a / b), nil
	case "//", "%":
		if b == 0 {
			return pyNum{}, fmt.Errorf("float floor division or modulo by zero")
		}
		m := math.Mod(a, b)
		if m != 0 && (m < 0) != (b < 0) {
			m += b
		}
		if op == "%" {
			return pyFloat(m), nil
		}
		return pyFloat(math.Round((a - m) / b)), nil
	case "**":
		if a == 0 && b < 0 {
			return pyNum{}, fmt.Errorf("0.0 cannot be raised to a negative power")
		}
		if a < 0 && b != math.Trunc(b) && !math.IsInf(b, 0) {
			return pyNum{}, fmt.Errorf("a negative number to a fractional power is complex, which marsfs does not support")
		}
		return pyFloat(math.Pow(a, b)), nil
	}
	return pyNum{}, fmt.Errorf("unsupported operator %s", op)
}

func compareNums(op string, x, y pyNum) bool {
	if !x.isFloat() && !y.isFloat() {
		a, b := x.i, y.i
		switch op {
		case "==":
			return a == b
		case "!=":
			return a != b
		case "<":
			return a < b
		case "<=":
			return a <= b
		case ">":
			return a > b
		}
		return a >= b
	}
	a, b := x.float(), y.float()
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	}
	return a >= b
}

// foldUnary computes op x (- + ~) on a Python number.
func foldUnary(op string, x pyNum) (pyNum, error) {
	switch op {
	case "+":
		if x.dt == Bool {
			return pyInt(x.i), nil
		}
		return x, nil
	case "-":
		if x.isFloat() {
			return pyFloat(-x.f), nil
		}
		if x.i == math.MinInt64 {
			return pyNum{}, errOverflow
		}
		return pyInt(-x.i), nil
	case "~":
		if x.isFloat() {
			return pyNum{}, fmt.Errorf("bad operand type for unary ~: 'float'")
		}
		return pyInt(^x.i), nil
	}
	return pyNum{}, fmt.Errorf("unsupported operator %s", op)
}

var (
	posInf   = math.Inf(1)
	nanValue = math.NaN()
)
