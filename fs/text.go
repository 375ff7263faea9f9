package fs

import (
	"strings"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec"
	"marsfs/tensor"
)

// textTensorFile is a tensor's text file: NumPy's print of it, rendered at
// open.
func textTensorFile(parent string, t *exec.Tensor) *node {
	return &node{name: "text", path: join(parent, "text"), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			a, err := t.Fetch(c.ctx)
			if err != nil {
				return nil, linux.EIO
			}
			return &snapshot{r: strings.NewReader(line(tensor.FormatText(a)))}, nil
		}}
}
