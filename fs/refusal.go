package fs

import (
	"errors"
	iofs "io/fs"
	"syscall"

	"github.com/hugelgupf/p9/linux"

	"marsfs/exec/engine"
)

// refusal is the errno a refused write answers with: for a write the
// session could not make durable (an *engine.WriteError), the system's
// errno it wraps (ENOSPC, EIO); for a file a spec names that its
// session's owner may not open, EACCES; else def.
func refusal(err error, def linux.Errno) linux.Errno {
	var we *engine.WriteError
	if !errors.As(err, &we) {
		if errors.Is(err, iofs.ErrPermission) {
			return linux.EACCES
		}
		return def
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return linux.Errno(en)
	}
	return linux.EIO
}

// fenceErrno answers a session this scheduler may not serve now
// (engine.Fence): one another scheduler holds is not here (ENOENT), and
// one it cannot confirm holding is to be asked again (EAGAIN).
func fenceErrno(err error) linux.Errno {
	var moved *engine.MovedError
	if errors.As(err, &moved) {
		return linux.ENOENT
	}
	return linux.EAGAIN
}
