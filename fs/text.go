package fs

import (
	"strings"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/tensor/codec"
)

// textTensorFile is a tensor's text file: NumPy's print of it, rendered at
// open from the elements the print shows.
func textTensorFile(parent string, t *engine.Tensor) *node {
	return &node{name: "text", path: join(parent, "text"), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			// A tensor of over 1000 elements prints summarized, so only the
			// chunks holding the elements shown are fetched.
			shape := t.Tiled().Shape
			a, err := t.FetchIndex(c.ctx, codec.TextIndex(shape))
			if err != nil {
				return nil, linux.EIO
			}
			return &snapshot{r: strings.NewReader(line(codec.FormatTextShown(shape, a)))}, nil
		}}
}
