package fs

import (
	"fmt"
	"strings"
	"time"

	"marsfs/exec/engine"
	"marsfs/tensor"
)

// The texts of the tree's files are rendered here, at read time, from
// what the engine reports.

// statusText renders a graph's status: its state, then "key value" lines,
// and for a failed graph the reason as a last "error" line.
func statusText(g *engine.Graph) string {
	s := g.Status()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", s.State)
	fmt.Fprintf(&b, "operands %d\nfinished %d\nrunning %d\nfailed %d\n", s.Operands, s.Finished, s.Running, s.Failed)
	fmt.Fprintf(&b, "elapsed %.3f\n", s.Elapsed.Seconds())
	fmt.Fprintf(&b, "peak_bytes %d\npeak_chunks %d\n", s.PeakBytes, s.PeakChunks)
	if len(s.WorkerPeaks) > 0 {
		b.WriteString("worker_peak_bytes")
		for _, w := range s.WorkerPeaks {
			fmt.Fprintf(&b, " %s=%d", w.Worker, w.Bytes)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "transfer_bytes %d\nspilled_bytes %d\n", s.TransferBytes, s.SpilledBytes)
	if s.Stage > 0 {
		fmt.Fprintf(&b, "stage %d\n", s.Stage)
		for _, sh := range s.Shapes {
			fmt.Fprintf(&b, "shape %s\n", sh)
		}
	}
	if s.Waiting != "" {
		fmt.Fprintf(&b, "waiting %s\n", s.Waiting)
	}
	if e := g.Err(); e != "" {
		fmt.Fprintf(&b, "error %s\n", strings.ReplaceAll(strings.TrimSpace(e), "\n", "; "))
	}
	return b.String()
}

// progressText renders a graph's progress file: one line, a bar, the
// percent of operands done, done/total operands, bytes of the chunks made
// of all the graph makes, the seconds elapsed and those left ("?" before
// the first operand is done), and the state:
//
//	[############------------------] 40.0% 400/1000 operands 3.1MiB/7.8MiB 2.0s elapsed 3.0s left RUNNING
//
// The time left is estimated from the plan's cost: the elapsed time
// scaled by the work left over the work done (core.OpWork, the bytes each
// operand touches). Counting operands instead misled on graphs whose
// operands differ in size: a reduction's many small combines finish in a
// blink after its map steps, which hold nearly all the time.
func progressText(g *engine.Graph) string {
	st := g.Status()
	return progressLine(st.Finished, st.Operands, st.Bytes, st.TotalBytes, st.Work, st.TotalWork, st.Elapsed, st.State)
}

func progressLine(done, total int, bytes, totalBytes, work, totalWork int64, elapsed time.Duration, state engine.GraphState) string {
	const width = 30
	frac := 1.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	fill := int(width * frac)
	left := "?"
	switch {
	case state.Ended():
		left = "0.0s"
	case work > 0 && work <= totalWork:
		left = fmt.Sprintf("%.1fs", elapsed.Seconds()*float64(totalWork-work)/float64(work))
	case done > 0 && done <= total:
		left = fmt.Sprintf("%.1fs", elapsed.Seconds()*float64(total-done)/float64(done))
	}
	return fmt.Sprintf("[%s%s] %.1f%% %d/%d operands %s/%s %.1fs elapsed %s left %s\n",
		strings.Repeat("#", fill), strings.Repeat("-", width-fill), 100*frac,
		done, total, humanBytes(bytes), humanBytes(totalBytes), elapsed.Seconds(), left, state)
}

// sessionText renders a session's ctl file: its number, its home (the
// scheduler it lives on), owner, graphs, tensors and settings.
func sessionText(s *engine.Session, home string) string {
	graphs := s.Graphs()
	running := 0
	for _, g := range graphs {
		if !g.Status().State.Ended() {
			running++
		}
	}
	names := s.Tensors()
	var bytes int64
	for _, name := range names {
		if t, ok := s.Tensor(name); ok {
			bytes += int64(t.NBytes())
		}
	}
	opt := s.Options()
	return fmt.Sprintf("session %d\nhome %s\nowner %s\ngraphs %d\nrunning %d\ntensors %d\ntensor_bytes %d\nfuse_enabled %s\nfuse_expr %s\n",
		s.ID(), home, s.Owner(), len(graphs), running, len(names), bytes, onOff(opt.Fuse), onOff(opt.FuseExpr))
}

// metaText renders a tensor's meta file.
func metaText(t *engine.Tensor) string {
	tt := t.Tiled()
	var b strings.Builder
	fmt.Fprintf(&b, "shape %s\n", tensor.FormatShape(tt.Shape))
	fmt.Fprintf(&b, "dtype %s\n", tt.DType)
	cs := make([]int, len(tt.Chunks))
	for i, c := range tt.Chunks {
		if len(c) > 0 {
			cs[i] = c[0]
		}
	}
	fmt.Fprintf(&b, "chunk_shape %s\n", tensor.FormatShape(cs))
	fmt.Fprintf(&b, "chunks %d\n", len(tt.Keys))
	fmt.Fprintf(&b, "grid %s\n", tensor.FormatShape(tensor.GridShape(tt.Chunks)))
	fmt.Fprintf(&b, "nbytes %d\n", t.NBytes())
	if t.Graph() > 0 {
		fmt.Fprintf(&b, "graph %d\n", t.Graph())
	} else {
		// An upload: no graph made it.
		b.WriteString("graph upload\n")
	}
	fmt.Fprintf(&b, "state %s\n", t.State())
	return b.String()
}

// humanBytes renders n bytes in binary units: 512B, 1.5KiB, 3.0GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
