package fs

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/exec/sched"
)

// BenchmarkSubmitWrites writes a spec of 1 MB into submit in 4 KiB
// blocks, as cat does, and reports what the writes' checks cost in parses
// of the whole spec ("parses"): each block is checked as it comes, and
// the whole text is built again at the clunk, which is not timed here.
func BenchmarkSubmitWrites(b *testing.B) {
	run := sched.NewLocal(1)
	defer run.Close()
	eng := engine.New(run)
	defer eng.Close()
	sess, err := eng.NewSession("me")
	if err != nil {
		b.Fatal(err)
	}
	var src strings.Builder
	src.WriteString("a0 = ones(4, chunks=2)\n")
	for i := 1; src.Len() < 1<<20; i++ {
		fmt.Fprintf(&src, "a%d = a%d * 2 + %d  # a comment to make the line longer\n", i, i-1, i%7)
	}
	text := []byte(src.String())
	parse := time.Duration(1 << 62)
	for range 3 {
		start := time.Now()
		if _, err := sess.Parse(string(text)); err != nil {
			b.Fatal(err)
		}
		parse = min(parse, time.Since(start))
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		h := &submitter{sess: sess, max: 4 << 20}
		for off := 0; off < len(text); off += 4096 {
			end := min(off+4096, len(text))
			if _, err := h.WriteAt(text[off:end], int64(off)); err != nil {
				b.Fatalf("write at %d: %v (%s)", off, err, sess.Error())
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(parse), "parses")
}
