// Package nbio reads and writes descriptors that are in non-blocking mode
// without telling the Go runtime that a system call is under way.
//
// A read or write through the syscall package enters the runtime's syscall
// state, in case the call blocks. When every processor was idle, entering
// it also wakes the runtime's monitor thread (sysmon) from its deep sleep,
// a futex call; the monitor then polls every 20 µs on another CPU until
// the daemon is idle again. A keystroke starts from idle every time, so
// each one paid the wake-up in its own path and about a fifth of the
// daemon's CPU for the polling, on the cores the client and the terminal's
// process need (docs/measured.md, "Raw reads and writes").
//
// A call on a non-blocking descriptor returns at once (EAGAIN when it
// would wait), so the runtime has nothing to guard against: such calls may
// be raw, as the runtime's own poller calls are. Mode says, for one
// descriptor, whether they are; a descriptor in blocking mode keeps the
// guarded calls, so a mistake costs speed, never a stalled processor.
//
// Builds with the race detector (or msan, asan) keep the guarded calls
// everywhere: those are what tell the detector that the kernel read or
// wrote a buffer.
package nbio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Mode is how one descriptor's reads and writes are made.
type Mode struct{ raw bool }

// ModeOf looks, once, at the descriptor behind rc: its calls are raw when
// it is in non-blocking mode and this build allows raw calls.
func ModeOf(rc syscall.RawConn) (Mode, error) {
	var (
		flags int
		ferr  error
	)
	if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		return Mode{}, err
	}
	if ferr != nil {
		return Mode{}, ferr
	}
	return Mode{raw: rawCalls && flags&unix.O_NONBLOCK != 0}, nil
}

// Of is c's descriptor and the mode its calls are made in (ModeOf): what
// each reader or writer of a non-blocking descriptor takes once, when it
// is made.
func Of(c syscall.Conn) (syscall.RawConn, Mode, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, Mode{}, err
	}
	m, err := ModeOf(rc)
	if err != nil {
		return nil, Mode{}, err
	}
	return rc, m, nil
}

// Raw reports whether the calls bypass the runtime's syscall state.
func (m Mode) Raw() bool { return m.raw }

// Read is read(2) on fd. An error is the call's errno (EAGAIN when nothing
// is there yet); 0 with no error is the end of the file.
func (m Mode) Read(fd uintptr, p []byte) (int, error) {
	if !m.raw {
		return unix.Read(int(fd), p)
	}
	return rawRead(fd, p)
}

// Write is write(2) on fd; a short count with EAGAIN when fd takes no more
// now.
func (m Mode) Write(fd uintptr, p []byte) (int, error) {
	if !m.raw {
		return unix.Write(int(fd), p)
	}
	return rawWrite(fd, p)
}

// WriteFrom writes p[from:] to fd, again after EINTR, until all of p is
// written, fd takes no more now (full: EAGAIN) or the write fails (err).
// written counts from the start of p, so a writer the poller calls again
// once fd has room passes it back as from.
func (m Mode) WriteFrom(fd uintptr, p []byte, from int) (written int, full bool, err error) {
	for written = from; written < len(p); {
		n, err := m.Write(fd, p[written:])
		switch err {
		case nil:
			written += n
		case unix.EINTR:
		case unix.EAGAIN:
			return written, true, nil
		default:
			return written, false, err
		}
	}
	return written, false, nil
}
