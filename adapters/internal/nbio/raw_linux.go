//go:build linux && !race && !msan && !asan

package nbio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const rawCalls = true

func rawRead(fd uintptr, p []byte) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func rawWrite(fd uintptr, p []byte) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
