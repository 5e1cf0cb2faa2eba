package ports

// Descriptors reports how many more files (pipes, ptys, sockets) the daemon
// may open before the operating system refuses it, so the terminal host can
// refuse a terminal with a reason instead of failing half-way through one.
type Descriptors interface {
	// Free is the number of descriptors the daemon may still open, and the
	// limit it counts against.
	Free() (free, limit int, err error)
}
