package chunk

import (
	"bytes"
	"encoding/gob"
	"math"
	"reflect"
	"testing"
)

// TestGenArgsGob sends GenArgs through gob, alone and inside an expression
// program, and checks that a fill value of -0.0 keeps its sign (gob
// leaves out struct fields equal to zero, and -0.0 is).
func TestGenArgsGob(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, a := range []GenArgs{
		{},
		{Value: negZero},
		{Offset: []int{3, 0}, Global: []int{10, 4}, Value: 1.5, IntValue: -7, Start: negZero, Step: -0.25, Low: -3, High: 9, K: -2, Seed: 1<<63 + 5},
	} {
		for _, v := range []any{a, ExprArgs{Code: []ExprInstr{{Op: ExprConst, Gen: a}}}} {
			var buf bytes.Buffer
			var in any = v
			if err := gob.NewEncoder(&buf).Encode(&in); err != nil {
				t.Fatalf("encode %+v: %v", v, err)
			}
			var out any
			if err := gob.NewDecoder(&buf).Decode(&out); err != nil {
				t.Fatalf("decode %+v: %v", v, err)
			}
			got, ok := out.(GenArgs)
			if e, isExpr := out.(ExprArgs); isExpr {
				got, ok = e.Code[0].Gen, true
			}
			if !ok || !reflect.DeepEqual(got, a) || math.Signbit(got.Value) != math.Signbit(a.Value) || math.Signbit(got.Start) != math.Signbit(a.Start) {
				t.Errorf("%+v came back as %+v", a, out)
			}
		}
	}
}
