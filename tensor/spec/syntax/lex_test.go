package syntax

import (
	"fmt"
	"strings"
	"testing"
)

// lexString renders tokens as "kind:text@line:col" for comparison.
func lexString(toks []token) string {
	names := map[tokKind]string{tokEOF: "EOF", tokNewline: "NL", tokName: "name", tokInt: "int", tokFloat: "float", tokString: "str", tokOp: "op"}
	var parts []string
	for _, t := range toks {
		text := t.text
		switch t.kind {
		case tokNewline:
			text = ""
		case tokInt:
			text = fmt.Sprint(t.ival)
		case tokFloat:
			text = fmt.Sprint(t.fval)
		case tokString:
			text = fmt.Sprintf("%q", t.sval)
		}
		parts = append(parts, fmt.Sprintf("%s:%s@%d:%d", names[t.kind], text, t.pos.Line, t.pos.Col))
	}
	return strings.Join(parts, " ")
}

func TestLex(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"x = 1", "name:x@1:1 op:=@1:3 int:1@1:5 NL:@1:6 EOF:@1:6"},
		{"a**-2 // 3.5e1", "name:a@1:1 op:**@1:2 op:-@1:4 int:2@1:5 op://@1:7 float:35@1:10 NL:@1:15 EOF:@1:15"},
		{"# only a comment\n\n", "EOF:@3:1"},
		{"f(a,\n  b)  # joined\nc", "name:f@1:1 op:(@1:2 name:a@1:3 op:,@1:4 name:b@2:3 op:)@2:4 NL:@2:15 name:c@3:1 NL:@3:2 EOF:@3:2"},
		{"x[...]; y", "name:x@1:1 op:[@1:2 op:...@1:3 op:]@1:6 NL:@1:7 name:y@1:9 NL:@1:10 EOF:@1:10"},
		{"'a\\'b' \"c\\n\"", `str:"a'b"@1:1 str:"c\n"@1:8 NL:@1:13 EOF:@1:13`},
		{"1_000 0x1F .5 1. 1e-3 0", "int:1000@1:1 int:31@1:7 float:0.5@1:12 float:1@1:15 float:0.001@1:18 int:0@1:23 NL:@1:24 EOF:@1:24"},
		{"a <= b != c >= d == e", "name:a@1:1 op:<=@1:3 name:b@1:6 op:!=@1:8 name:c@1:11 op:>=@1:13 name:d@1:16 op:==@1:18 name:e@1:21 NL:@1:22 EOF:@1:22"},
		{"x \\\n+ 1", "name:x@1:1 op:+@2:1 int:1@2:3 NL:@2:4 EOF:@2:4"},
		{"é = 1", ""},
		{"s = 'é'", `name:s@1:1 op:=@1:3 str:"é"@1:5 NL:@1:8 EOF:@1:8`},
		{"x += 1", "name:x@1:1 op:+=@1:3 int:1@1:6 NL:@1:7 EOF:@1:7"},
		{"1e400", "float:+Inf@1:1 NL:@1:6 EOF:@1:6"},
		{"\ufeffx = 1", "name:x@1:1 op:=@1:3 int:1@1:5 NL:@1:6 EOF:@1:6"},
	} {
		toks, err := lex(tc.src, 1)
		if err != nil {
			if tc.want != "" {
				t.Errorf("%q: %v", tc.src, err)
			}
			continue
		}
		if got := lexString(toks); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

func TestLexErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"é = 1", "1:1: unexpected character 'é'"},
		{"x = 1\n  y = 'abc\n", "2:7: unterminated string literal"},
		{"x = 0b102", "1:5: invalid integer literal \"0b102\""},
		{"x = 1_", "1:5: invalid number literal \"1_\""},
		{"x = 5abc", "1:5: invalid number literal \"5a\""},
		{"x = 1.2.3", "1:5: invalid number literal \"1.2.\""},
		{"x = $", "1:5: unexpected character '$'"},
		{"x = 00", ""},
	} {
		_, err := lex(tc.src, 1)
		switch {
		case err == nil && tc.want != "":
			t.Errorf("%q: no error, want %q", tc.src, tc.want)
		case err != nil && err.Error() != tc.want:
			t.Errorf("%q:\n got %q\nwant %q", tc.src, err, tc.want)
		}
	}
}
