package fs

import (
	"fmt"
	"strings"

	"marsfs/exec/core"
)

// phaseFields renders what a worker measured of a run as fields of a line:
// the phase it is in (a RUNNING operand's; "-" once over), then
// "queued=S allocating=S ..." for each phase it entered, in seconds, the
// phase it is in counted up to now (Unix microseconds).
func phaseFields(t core.Timing, now int64) string {
	var b strings.Builder
	phase := t.Current()
	if t.Stored == 0 && t.Phase > phase {
		phase = t.Phase // a started report's, with points its runner had not published
	}
	if phase == core.NoPhase {
		b.WriteString("-")
	} else {
		b.WriteString(phase.String())
	}
	enter, _ := t.Bounds()
	spent := t.Spent(now)
	for i, p := range core.Phases {
		if enter[i] == 0 {
			break
		}
		fmt.Fprintf(&b, " %s=%.6f", p, float64(spent[i])/1e6)
	}
	return b.String()
}
