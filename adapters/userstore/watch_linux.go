package userstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/adapters/internal/nbio"
)

// folderWatch is an inotify watch on the users file's folder, read without
// waiting: the kernel queues an event inside the very call that changes the
// file (a write, a chmod, the rename of an atomic replace), so one
// non-blocking read tells whether the file may have changed since the last
// one, as surely as a stat would and without walking the path. It has no
// goroutine; the store asks it on each call.
//
// fsnotify would add a goroutine that delivers events later, so a change
// would take effect some time after it was made instead of on the next call.
type folderWatch struct {
	f    *os.File // the inotify descriptor; its finalizer closes it if Close is never called
	rc   syscall.RawConn
	mode nbio.Mode // raw reads: this read is on every request's path
	name string    // the file's name in the folder
	buf  []byte

	// The read under way (the store polls with its lock held): kept here,
	// with readFd made once from w.readOnce, so a poll allocates nothing.
	readFd  func(fd uintptr) bool
	n       int
	readErr error
}

type watchResult int

const (
	quiet   watchResult = iota // nothing happened to the file
	changed                    // the file may have changed: read it again
	lost                       // the watch no longer sees the folder: stop using it
)

const folderEvents = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// watchFolder watches path's folder for changes to path. A path that is a
// symbolic link is not watched (the link's target lives elsewhere).
func watchFolder(path string) (*folderWatch, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, errors.New("the users file is a symbolic link")
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), folderEvents); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("inotify: watch %s: %w", filepath.Dir(path), err)
	}
	w := &folderWatch{f: os.NewFile(uintptr(fd), "inotify"), name: filepath.Base(path), buf: make([]byte, 4096)}
	w.readFd = w.readOnce
	if w.rc, w.mode, err = nbio.Of(w.f); err != nil {
		w.close()
		return nil, fmt.Errorf("inotify: %w", err)
	}
	return w, nil
}

// poll drains the queued events and says what they mean for the file.
func (w *folderWatch) poll() watchResult {
	res := quiet
	for {
		if err := w.rc.Read(w.readFd); err != nil {
			return lost
		}
		n, readErr := w.n, w.readErr
		if errors.Is(readErr, unix.EAGAIN) {
			return res
		}
		if readErr != nil || n <= 0 {
			return lost
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameEnd := off + unix.SizeofInotifyEvent + int(ev.Len)
			if nameEnd > n {
				return lost
			}
			switch {
			case ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
				return lost
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				res = changed
			case eventName(w.buf[off+unix.SizeofInotifyEvent:nameEnd]) == w.name:
				res = changed
			}
			off = nameEnd
		}
	}
}

// readOnce takes what is queued, and never waits for an event.
func (w *folderWatch) readOnce(fd uintptr) bool {
	w.n, w.readErr = w.mode.Read(fd, w.buf)
	return true
}

// eventName is an event's name without its NUL padding.
func eventName(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func (w *folderWatch) close() { _ = w.f.Close() }
