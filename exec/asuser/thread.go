package asuser

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"marsfs/tensor/chunk"
)

// keep is the value of setfsuid and setfsgid that changes nothing and
// returns the current value (-1 as an unsigned id, which is never valid).
const keep = ^uintptr(0) >> 32

// creds are a thread's filesystem ids and groups.
type creds struct {
	uid, gid uint32
	groups   []uint32
}

// asOwner runs fn on a thread of its own acting as o (see the package
// doc), and returns fn's error, or why the thread could not become o.
func asOwner(o chunk.Owner, process creds, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := become(o)
		if err == nil {
			err = fn()
		}
		if rerr := restore(process); rerr != nil {
			// The thread is neither o's nor the process's: the goroutine
			// returns locked to it, and the runtime ends the thread.
			if err == nil {
				err = rerr
			}
			errc <- err
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// become gives the calling thread o's groups, gid and uid for the
// filesystem: groups first, and the uid last, which drops the thread's
// filesystem capabilities (its CAP_SETUID, needed to restore, stays).
func become(o chunk.Owner) error {
	if err := setgroups(o.Groups); err != nil {
		return fmt.Errorf("setgroups for %v: %w", o, err)
	}
	if err := setfs(unix.SYS_SETFSGID, o.GID); err != nil {
		return fmt.Errorf("setfsgid %d: %w", o.GID, err)
	}
	if err := setfs(unix.SYS_SETFSUID, o.UID); err != nil {
		return fmt.Errorf("setfsuid %d: %w", o.UID, err)
	}
	return nil
}

// restore gives the calling thread back the process's credentials, the
// uid first (which gives back the filesystem capabilities).
func restore(c creds) error {
	if err := setfs(unix.SYS_SETFSUID, c.uid); err != nil {
		return fmt.Errorf("restoring fsuid %d: %w", c.uid, err)
	}
	if err := setfs(unix.SYS_SETFSGID, c.gid); err != nil {
		return fmt.Errorf("restoring fsgid %d: %w", c.gid, err)
	}
	if err := setgroups(c.groups); err != nil {
		return fmt.Errorf("restoring groups: %w", err)
	}
	return nil
}

// setfs sets the calling thread's filesystem uid or gid (trap
// SYS_SETFSUID or SYS_SETFSGID) to id, and checks that it took: the call
// returns the previous value whether it succeeded or not, so the value is
// read back.
func setfs(trap uintptr, id uint32) error {
	unix.RawSyscall(trap, uintptr(id), 0, 0)
	if got, _, _ := unix.RawSyscall(trap, keep, 0, 0); uint32(got) != id {
		return fmt.Errorf("the thread's id is %d: %w", uint32(got), unix.EPERM)
	}
	return nil
}

// setgroups sets the calling thread's supplementary groups only: the
// system call itself, where Go's syscall.Setgroups and glibc's setgroups
// set every thread's.
func setgroups(groups []uint32) error {
	var p unsafe.Pointer
	if len(groups) > 0 {
		p = unsafe.Pointer(&groups[0])
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(groups)), uintptr(p), 0); errno != 0 {
		return errno
	}
	return nil
}

// processCreds returns the credentials of the calling thread, which are
// the process's: marsfs changes a thread's only in asOwner, and restores
// them or ends the thread.
func processCreds() (creds, error) {
	gs, err := unix.Getgroups()
	if err != nil {
		return creds{}, fmt.Errorf("getgroups: %w", err)
	}
	c := creds{uid: uint32(unix.Geteuid()), gid: uint32(unix.Getegid())}
	for _, g := range gs {
		c.groups = append(c.groups, uint32(g))
	}
	return c, nil
}
