// Package audit is the append-only JSON-lines audit log (seed 002, "Audit
// Logging"): one record per line, written and synced to disk before Record
// returns, and read back with filters for `shellgate audit`.
package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/shellgate/shellgate/ports"
)

// ErrClosed is returned by Record once the log has been closed.
var ErrClosed = errors.New("audit log is closed")

// file is what the log needs of an *os.File; tests put a failing one in.
type file interface {
	io.Writer
	Sync() error
	Close() error
}

// Log is an open audit log. It implements ports.AuditSink and is safe for
// concurrent use: one mutex orders the records, so lines never interleave.
//
// Every Record writes one line and fsyncs it before returning. On the
// project's build host (ext4 on a virtio disk, BenchmarkRecord) a record
// takes 0.5–0.8 ms with the fsync and 3–9 µs without it; under the one mutex
// that caps the log near 1,500 records a second. An agent command costs a
// `$SHELL -c` spawn (about 16 ms for `sh -c true` on the same host) and
// writes one to three records, so the sync adds a few percent at most and
// there is deliberately no option to skip it: a record a crash can take back
// is not one the caller may answer after.
type Log struct {
	path string
	opts Options

	mu sync.Mutex
	f  file // nil once closed
	// size is the current file's length, for rotation.
	size int64
	// torn is set when a write failed part-way: the file may end inside a
	// line, so the next record starts with a newline to stay whole.
	torn bool
	// broken is the sync failure that made the log unusable. After a failed
	// fsync the kernel may already have dropped the unwritten pages and a
	// later fsync can report success for data that is gone, so no later
	// record can be trusted durable: every Record fails from then on.
	broken error
}

var _ ports.AuditSink = (*Log)(nil)

// Open opens the log at path for appending, creating it owner-only (0600).
// It refuses a path that is not a regular file, and an existing log that
// others can read or anyone but the owner can write: commands are recorded
// as typed, and a log others can edit proves nothing. The parent directory
// must exist.
func Open(path string) (*Log, error) { return OpenWith(path, Options{}) }

// Options tune an audit log.
type Options struct {
	// MaxBytes rotates the log before a record would take it past this
	// size: the file becomes path.1 (path.1 becomes path.2, …) and a new
	// one is started. 0 never rotates.
	MaxBytes int64
	// Keep is how many rotated files are kept (path.1 … path.Keep); the
	// oldest beyond that is deleted. 0 means DefaultKeep.
	Keep int
}

// DefaultKeep is how many rotated files a rotating log keeps by default.
const DefaultKeep = 5

// OpenWith is Open with options.
func OpenWith(path string, opts Options) (*Log, error) {
	if opts.Keep <= 0 {
		opts.Keep = DefaultKeep
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	torn, err := check(f, path)
	if err == nil {
		// A new file's name is only durable once its directory is synced;
		// without this a crash could lose the whole log, synced records and all.
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	return &Log{path: path, opts: opts, f: f, torn: torn, size: fi.Size()}, nil
}

// Files lists an audit log's files oldest first: the rotated ones that
// exist (path.N … path.1), then path itself.
func Files(path string) []string {
	var rotated []string
	for i := 1; ; i++ {
		p := path + "." + strconv.Itoa(i)
		if _, err := os.Lstat(p); err != nil {
			break
		}
		rotated = append(rotated, p)
	}
	slices.Reverse(rotated)
	return append(rotated, path)
}

// rotate moves the current file to path.1, shifting older ones up and
// dropping the one beyond Keep, and starts a new file. l.mu is held.
func (l *Log) rotate() error {
	if err := l.f.Sync(); err != nil {
		l.broken = err
		return fmt.Errorf("sync audit log %s: %w", l.path, err)
	}
	_ = os.Remove(l.path + "." + strconv.Itoa(l.opts.Keep))
	for i := l.opts.Keep - 1; i >= 1; i-- {
		from := l.path + "." + strconv.Itoa(i)
		if err := os.Rename(from, l.path+"."+strconv.Itoa(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate audit log: %w", err)
		}
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return fmt.Errorf("rotate audit log: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("rotate audit log: start %s: %w", l.path, err)
	}
	if err := syncDir(filepath.Dir(l.path)); err != nil {
		_ = f.Close()
		return err
	}
	_ = l.f.Close()
	l.f, l.size, l.torn = f, 0, false
	return nil
}

// check vets an opened log and reports whether it ends inside a line (a
// crash mid-write), so the first record starts on a fresh line.
func check(f *os.File, path string) (torn bool, err error) {
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("audit log %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("audit log %s is not a regular file (%s); give a file path", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o026 != 0 {
		return false, fmt.Errorf("audit log %s has mode %04o, so others can read or change it; run chmod 600 %s", path, perm, path)
	}
	if fi.Size() == 0 {
		return false, nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return false, fmt.Errorf("audit log %s: read last byte: %w", path, err)
	}
	return last[0] != '\n', nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync audit log directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync audit log directory %s: %w", dir, err)
	}
	return nil
}

// Path is the file the log writes to.
func (l *Log) Path() string { return l.path }

// Record appends e as one line and syncs it to disk before returning. An
// error means the record may not be on disk and the caller must not go on
// as if audited. ctx is checked before writing; once the write has started it
// runs to the end, since half a record is worse than a late one.
func (l *Log) Record(ctx context.Context, e ports.AuditEvent) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("audit record not written: %w", context.Cause(ctx))
	}
	b, err := encode(e)
	if err != nil {
		return err
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.f == nil:
		return ErrClosed
	case l.broken != nil:
		return fmt.Errorf("audit log %s is unusable since a sync failed (%w); nothing more can be recorded until shellgate restarts with a working disk", l.path, l.broken)
	}
	// The wait for the lock may have outlived the caller.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("audit record not written: %w", context.Cause(ctx))
	}
	if l.opts.MaxBytes > 0 && l.size > 0 && l.size+int64(len(b)) > l.opts.MaxBytes {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	if l.torn {
		b = append([]byte{'\n'}, b...)
	}
	// One write per record: with O_APPEND the kernel places it at the end
	// even if another process appends too.
	n, err := l.f.Write(b)
	l.size += int64(n)
	if err != nil {
		if n > 0 {
			l.torn = true
		}
		return fmt.Errorf("write audit log %s: %w", l.path, err)
	}
	l.torn = false
	if err := l.f.Sync(); err != nil {
		l.broken = err
		return fmt.Errorf("sync audit log %s: %w", l.path, err)
	}
	return nil
}

// Close closes the log; later Records fail with ErrClosed. Closing twice is
// harmless.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("close audit log %s: %w", l.path, err)
	}
	return nil
}
