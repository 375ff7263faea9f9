package syntax

import "testing"

// TestComplete checks where the whole statements of a spec written so far
// end.
func TestComplete(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string // the prefix Complete keeps
	}{
		{"", ""},
		{"x = 1", ""},
		{"x = 1\n", "x = 1\n"},
		{"x = 1\ny = (", "x = 1\n"},
		{"x = 1\ny = (2,\n", "x = 1\n"},
		{"x = 1\ny = (2,\n 3)\n", "x = 1\ny = (2,\n 3)\n"},
		{"x = [1,\n2]\nz", "x = [1,\n2]\n"},
		{"x = 1 + \\\n 2\n", "x = 1 + \\\n 2\n"},
		{"x = 1 + \\\n", ""},
		{"# a comment\n", ""},
		{"x = 1\n# a comment\n\n", "x = 1\n"},
		{"x = 1  # ( not a bracket\n", "x = 1  # ( not a bracket\n"},
		{"x = 1\ny = 'open\n", "x = 1\n"},
		{"x = 1\ny = '(' \n", "x = 1\ny = '(' \n"},
		{"x = 1; y = 2\n", "x = 1; y = 2\n"},
		{"x = ones(3))\ny = 2\n", "x = ones(3))\ny = 2\n"},
	} {
		if got := tc.src[:Complete(tc.src)]; got != tc.want {
			t.Errorf("Complete(%q) keeps %q, want %q", tc.src, got, tc.want)
		}
	}
}
