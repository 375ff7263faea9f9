package syntax

import (
	"fmt"
	"math"
	"math/bits"

	"marsfs/tensor"
)

var errOverflow = fmt.Errorf("integer overflow: the result does not fit in int64")

// FoldBinary computes x op y on Python numbers, as Python does: a spec's
// arithmetic on plain numbers is folded as it is parsed.
func FoldBinary(op string, x, y PyNum) (PyNum, error) {
	switch op {
	case "==", "!=", "<", "<=", ">", ">=":
		return PyBool(compareNums(op, x, y)), nil
	case "&", "|", "^":
		if x.IsFloat() || y.IsFloat() {
			return PyNum{}, fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, x.TypeName(), y.TypeName())
		}
		r := x.I & y.I
		switch op {
		case "|":
			r = x.I | y.I
		case "^":
			r = x.I ^ y.I
		}
		if x.Dt == tensor.Bool && y.Dt == tensor.Bool {
			return PyBool(r != 0), nil
		}
		return PyInt(r), nil
	case "@":
		return PyNum{}, fmt.Errorf("unsupported operand type(s) for @: '%s' and '%s'", x.TypeName(), y.TypeName())
	}
	if x.IsFloat() || y.IsFloat() || op == "/" {
		return foldFloat(op, x, y)
	}
	a, b := x.I, y.I
	switch op {
	case "+":
		r := a + b
		if (r > a) != (b > 0) {
			return PyNum{}, errOverflow
		}
		return PyInt(r), nil
	case "-":
		r := a - b
		if (r < a) != (b > 0) {
			return PyNum{}, errOverflow
		}
		return PyInt(r), nil
	case "*":
		hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
		if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
			return PyNum{}, errOverflow
		}
		return PyInt(a * b), nil
	case "//", "%":
		if b == 0 {
			return PyNum{}, fmt.Errorf("integer division or modulo by zero")
		}
		if a == math.MinInt64 && b == -1 {
			return PyNum{}, errOverflow
		}
		q, r := a/b, a%b
		if r != 0 && (r < 0) != (b < 0) {
			q--
			r += b
		}
		if op == "//" {
			return PyInt(q), nil
		}
		return PyInt(r), nil
	case "**":
		if b < 0 {
			return foldFloat(op, x, y)
		}
		r := int64(1)
		for i := int64(0); i < b; i++ {
			next, err := FoldBinary("*", PyInt(r), PyInt(a))
			if err != nil {
				return PyNum{}, err
			}
			r = next.I
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
		return PyInt(r), nil
	}
	return PyNum{}, fmt.Errorf("unsupported operator %s", op)
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func foldFloat(op string, x, y PyNum) (PyNum, error) {
	a, b := x.Float(), y.Float()
	switch op {
	case "+":
		return PyFloat(a + b), nil
	case "-":
		return PyFloat(a - b), nil
	case "*":
		return PyFloat(a * b), nil
	case "/":
		if b == 0 {
			return PyNum{}, fmt.Errorf("division by zero")
		}
		return PyFloat(a / b), nil
	case "//", "%":
		if b == 0 {
			return PyNum{}, fmt.Errorf("float floor division or modulo by zero")
		}
		m := math.Mod(a, b)
		if m != 0 && (m < 0) != (b < 0) {
			m += b
		}
		if op == "%" {
			return PyFloat(m), nil
		}
		return PyFloat(math.Round((a - m) / b)), nil
	case "**":
		if a == 0 && b < 0 {
			return PyNum{}, fmt.Errorf("0.0 cannot be raised to a negative power")
		}
		if a < 0 && b != math.Trunc(b) && !math.IsInf(b, 0) {
			return PyNum{}, fmt.Errorf("a negative number to a fractional power is complex, which marsfs does not support")
		}
		return PyFloat(math.Pow(a, b)), nil
	}
	return PyNum{}, fmt.Errorf("unsupported operator %s", op)
}

func compareNums(op string, x, y PyNum) bool {
	if !x.IsFloat() && !y.IsFloat() {
		a, b := x.I, y.I
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
	a, b := x.Float(), y.Float()
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

// FoldUnary computes op x (- + ~) on a Python number.
func FoldUnary(op string, x PyNum) (PyNum, error) {
	switch op {
	case "+":
		if x.Dt == tensor.Bool {
			return PyInt(x.I), nil
		}
		return x, nil
	case "-":
		if x.IsFloat() {
			return PyFloat(-x.F), nil
		}
		if x.I == math.MinInt64 {
			return PyNum{}, errOverflow
		}
		return PyInt(-x.I), nil
	case "~":
		if x.IsFloat() {
			return PyNum{}, fmt.Errorf("bad operand type for unary ~: 'float'")
		}
		return PyInt(^x.I), nil
	}
	return PyNum{}, fmt.Errorf("unsupported operator %s", op)
}
