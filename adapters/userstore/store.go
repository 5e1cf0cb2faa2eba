// Package userstore keeps the users file (D6): who may sign in, with which
// roles, and the sha256 hash of each person's token. It implements
// ports.UserStore and the edits behind `shellgate token …`.
//
// The file is checked on every call and re-read when it has changed, so
// removing a person or changing a role takes effect on their next command,
// with no goroutine to stop. On Linux the check is one non-blocking read of
// an inotify watch on the file's folder; elsewhere, or when the watch is
// lost, it is a stat. A file that is missing,
// malformed or writable by other accounts lets nobody in, is reported by
// Err, and is never written over by the store.
package userstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shellgate/shellgate/domain/access"
	"github.com/shellgate/shellgate/ports"
)

var _ ports.UserStore = (*Store)(nil)

// Store is the users file behind ports.UserStore. It is safe for
// concurrent use, and several processes (the daemon and the CLI) may use
// one file: every edit is a fresh read-modify-write replaced atomically.
type Store struct {
	path string

	// mu guards the cache below. It is held only for a check and, when the
	// file changed, one small read and parse.
	mu         sync.Mutex
	watch      *folderWatch // nil: stat the file on every call
	watchTried time.Time    // when a watch was last set up; retried after watchRetry
	closed     bool
	loaded     bool
	seen       os.FileInfo // what the cache was read from; nil when missing
	raw        []byte      // the bytes the cache was parsed from
	dir        *directory  // nil while the file is missing or untrusted
	err        error
	warnings   []string
	// gen counts the changes of the answers (ports.UserStore.Generation);
	// expiry is when the next sign-in link in dir expires, zero if none.
	gen    uint64
	expiry time.Time

	// now is the clock links expire by; nil is the system's.
	now func() time.Time

	// editMu serialises this process's edits; edits do not take mu, so
	// lookups carry on while one is being written and synced.
	editMu sync.Mutex
}

// directory is one parse of the file; never changed once built, so callers
// may use it after mu is released.
type directory struct {
	file  *fileData
	roles *access.Roles
}

// Open returns the store for the users file at path. A file that is
// missing or malformed is not an error here — the store answers nobody and
// Err says why, so `serve` can Bootstrap and a fixed file is picked up
// without a restart. Open fails only for a path it can never use.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("the users file needs a path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("users file %s: %w", path, err)
	}
	s := &Store{path: abs}
	_, err = s.current()
	var bad *MalformedError
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &bad) {
		return nil, err
	}
	return s, nil
}

// Close releases the store's watch; the store carries on, checking the
// file with a stat on every call.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.watch != nil {
		s.watch.close()
		s.watch = nil
	}
	return nil
}

// Path is the users file's absolute path.
func (s *Store) Path() string { return s.path }

// Lookup returns the principal whose token this is, comparing its hash in
// constant time with every record's.
func (s *Store) Lookup(token string) (access.Principal, bool) {
	d, _ := s.current()
	if d == nil || token == "" {
		return access.Principal{}, false
	}
	i, digest := match(d.file.users, token, s.clock())
	if i < 0 {
		return access.Principal{}, false
	}
	p := principalOf(d.file.users[i], s.clock())
	// Signed in with a link, the sign-in is the link's: it ends when the
	// link expires, while the person's own token stays good.
	p.Credential, p.Links = credentialOf(digest), nil
	return p, true
}

// Principal returns the current record for id; false once it is removed.
func (s *Store) Principal(id string) (access.Principal, bool) {
	d, _ := s.current()
	if d == nil {
		return access.Principal{}, false
	}
	i := d.file.find(id)
	if i < 0 {
		return access.Principal{}, false
	}
	return principalOf(d.file.users[i], s.clock()), true
}

// PrincipalRoles returns Principal and Roles from one reading of the file
// (ports.UserReading).
func (s *Store) PrincipalRoles(id string) (access.Principal, *access.Roles, bool) {
	d, _ := s.current()
	if d == nil {
		return access.Principal{}, &access.Roles{}, false
	}
	i := d.file.find(id)
	if i < 0 {
		return access.Principal{}, d.roles, false
	}
	return principalOf(d.file.users[i], s.clock()), d.roles, true
}

// Roles returns the current roles table; an empty one (permitting nothing)
// while the file is missing or untrusted.
func (s *Store) Roles() *access.Roles {
	d, _ := s.current()
	if d == nil {
		return &access.Roles{}
	}
	return d.roles
}

// Generation changes whenever an answer of the store may have changed:
// the file was edited (its contents, or its mode), went missing or became
// untrusted, or a sign-in link in it expired. It checks the file as every
// other call does, and no more; an unchanged file leaves it as it was.
func (s *Store) Generation() uint64 {
	_, _ = s.current()
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.clock(); !s.expiry.IsZero() && !now.Before(s.expiry) {
		s.gen++
		s.expiry = nextExpiry(s.dir, now)
	}
	return s.gen
}

// nextExpiry is when the first link of d still good at now expires; zero
// when there is none.
func nextExpiry(d *directory, now time.Time) time.Time {
	var next time.Time
	if d == nil {
		return next
	}
	for _, u := range d.file.users {
		for _, l := range u.links {
			if now.Before(l.expires) && (next.IsZero() || l.expires.Before(next)) {
				next = l.expires
			}
		}
	}
	return next
}

// Err says why the store currently answers nobody: no file, a malformed
// one (*MalformedError), or one it cannot read. Nil when the file is good.
func (s *Store) Err() error {
	_, err := s.current()
	return err
}

// Warnings lists what the current file gets away with but should fix: a
// grant that does not parse, a role nothing defines, loose permissions.
func (s *Store) Warnings() []string {
	_, _ = s.current()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...)
}

// List returns every user in file order, or why the file cannot be used.
func (s *Store) List() ([]access.Principal, error) {
	d, err := s.current()
	if err != nil {
		return nil, err
	}
	out := make([]access.Principal, 0, len(d.file.users))
	for _, u := range d.file.users {
		p := principalOf(u, s.clock())
		p.Credential, p.Links = "", nil // a listing names people, not their tokens
		out = append(out, p)
	}
	return out, nil
}

// principalOf is the record as a principal at now: its own token and the
// links that have not expired.
func principalOf(r record, now time.Time) access.Principal {
	p := access.Principal{ID: r.id, Roles: append([]string(nil), r.roles...), Credential: credentialOf(r.digest)}
	for _, l := range r.links {
		if now.Before(l.expires) {
			p.Links = append(p.Links, credentialOf(l.digest))
		}
	}
	return p
}

// clock is the store's time: now, unless a test set another.
func (s *Store) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// credentialOf names a token by half of its stored digest: enough to tell
// one token from the next, and no more than the users file already shows.
func credentialOf(digest [sha256.Size]byte) string {
	return hex.EncodeToString(digest[:sha256.Size/2])
}

// racyWindow is how long after a file's last modification its stat is not
// trusted alone. File times tick coarsely (a few ms), so two writes of the
// same size inside one tick look identical; while the file is that fresh
// its bytes are compared too (git's "racily clean" problem).
const racyWindow = 2 * time.Second

// watchRetry is how often a store with no watch tries to set one up again
// (the folder may not exist yet); it stats the file meanwhile.
const watchRetry = time.Second

// current returns the directory as the file is now. With a watch, it is
// the cache unless the watch saw the file change; without one, the file is
// re-read when its identity, size, mode or time changed.
func (s *Store) current() (*directory, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch != nil {
		switch s.watch.poll() {
		case quiet:
			return s.dir, s.err
		case lost:
			s.watch.close()
			s.watch = nil
		}
		s.loaded = false // changed, or changes may have been missed: read it
	}
	if s.watch == nil && !s.closed && time.Since(s.watchTried) >= watchRetry {
		// Watch first, read after: a change made after the read is an event.
		s.watchTried = time.Now()
		if w, err := watchFolder(s.path); err == nil {
			s.watch = w
			s.loaded = false
		}
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		s.forget(err)
		return nil, s.err
	}
	if s.loaded && s.seen != nil && sameStat(s.seen, fi) && time.Since(fi.ModTime()) >= racyWindow {
		return s.dir, s.err
	}
	s.reload()
	return s.dir, s.err
}

// forget drops the cache when the file cannot be looked at.
func (s *Store) forget(err error) {
	if s.dir != nil {
		// Whoever was let in is nobody now.
		s.gen++
	}
	s.loaded, s.seen, s.raw, s.dir, s.warnings, s.expiry = true, nil, nil, nil, nil, time.Time{}
	if errors.Is(err, fs.ErrNotExist) {
		s.err = fmt.Errorf("no users file at %s; `shellgate serve` creates one: %w", s.path, fs.ErrNotExist)
		return
	}
	s.err = fmt.Errorf("cannot read the users file: %w", err)
}

// reload reads and parses the file. The stat kept is taken from the open
// file, so it describes the bytes read; a write racing the read changes
// the time again and is picked up by the next call.
func (s *Store) reload() {
	f, err := os.Open(s.path)
	if err != nil {
		s.forget(err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.forget(err)
		return
	}
	if fi.IsDir() {
		s.forget(fmt.Errorf("%s is a directory", s.path))
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		s.forget(err)
		return
	}
	if s.loaded && s.seen != nil && bytes.Equal(data, s.raw) && s.seen.Mode() == fi.Mode() {
		s.seen = fi
		return
	}
	s.loaded, s.seen, s.raw = true, fi, data
	d, warnings, err := load(s.path, fi.Mode(), data)
	s.dir, s.warnings, s.err = d, warnings, err
	s.gen++
	s.expiry = nextExpiry(d, s.clock())
}

// load turns the file's bytes into a directory, or says why it must not be
// trusted.
func load(path string, mode fs.FileMode, data []byte) (*directory, []string, error) {
	// Another account that can write the file can make itself admin, so
	// such a file is not trusted; one merely readable is only warned about,
	// since it holds hashes of 256-bit secrets, not the secrets.
	if mode.Perm()&0o022 != 0 {
		return nil, nil, &MalformedError{Path: path, Reason: fmt.Sprintf("is writable by other accounts (mode %04o); chmod 600 it", mode.Perm())}
	}
	f, err := parse(data)
	if err != nil {
		var bad *MalformedError
		if errors.As(err, &bad) {
			bad.Path = path
		}
		return nil, nil, err
	}
	roles, warnings := f.table()
	if mode.Perm()&0o044 != 0 {
		warnings = append(warnings, fmt.Sprintf("the users file is readable by other accounts (mode %04o); chmod 600 it", mode.Perm()))
	}
	return &directory{file: f, roles: roles}, warnings, nil
}

// sameStat reports whether two stats describe the same, unchanged file:
// same inode (an atomic replace makes a new one), size, mode and time.
func sameStat(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.Mode() == b.Mode() && a.ModTime().Equal(b.ModTime())
}
