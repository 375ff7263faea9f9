package lang

import (
	"strings"
	"testing"
)

// TestMaxChunks: a server's bound on a tensor's chunks (Options.MaxChunks,
// from the memory it has) refuses chunks= past it, with the numbers, in
// text and in a prefix; at the bound the spec is taken. No fixed bound
// of its own remains below MaxChunks.
func TestMaxChunks(t *testing.T) {
	cases := []struct {
		src, err string
	}{
		{"x = ones(1000, chunks=10)", ""},
		{"x = ones(1001, chunks=10)", "1:23: chunks of 10 cut an axis of length 1001 into 101 chunks, more than the 100 this server has the memory for: use larger chunks"},
		{"x = ones((20, 20), chunks=(2, 4))", ""},
		{"x = ones((20, 40), chunks=(2, 2))", "1:27: chunks cut shape (20,40) into 200 chunks, more than the 100 this server has the memory for: use larger chunks"},
		{"x = ones(300, chunks=((" + strings.Repeat("1, ", 299) + "1),))", "300 chunks on one axis, more than the 100"},
	}
	for _, tc := range cases {
		for _, how := range []string{"parse", "prefix"} {
			var err error
			if how == "parse" {
				_, err = ParseWith(tc.src, nil, Options{MaxChunks: 100})
			} else {
				err = NewPrefixWith(nil, Options{MaxChunks: 100}).Add(tc.src + "\n")
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("%s %q: %v", how, tc.src, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("%s %q: error %v, want %q", how, tc.src, err, tc.err)
			}
		}
	}
	// Without a bound, 2^20 chunks and more are taken (the bound was
	// fixed at 2^20).
	if _, err := Parse("x = ones(20000000, chunks=10)", nil); err != nil {
		t.Errorf("2,000,000 chunks: %v", err)
	}
}
