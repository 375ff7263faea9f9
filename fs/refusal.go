package fs

import (
	"errors"
	"syscall"

	"github.com/hugelgupf/p9/linux"

	"marsfs/exec/engine"
)

// refusal is the errno a refused write answers with: for a write the
// session could not make durable (an *engine.WriteError), the system's
// errno it wraps (ENOSPC, EIO), else def.
func refusal(err error, def linux.Errno) linux.Errno {
	var we *engine.WriteError
	if !errors.As(err, &we) {
		return def
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return linux.Errno(en)
	}
	return linux.EIO
}
