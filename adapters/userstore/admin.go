package userstore

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/shellgate/shellgate/domain/access"
)

// The kinds of refusal an edit can meet, for the CLI to tell apart with
// errors.Is; the messages themselves say what to do.
var (
	// ErrUnknownUser: no record has that id.
	ErrUnknownUser = errors.New("unknown user")
	// ErrUserExists: a record already has that id.
	ErrUserExists = errors.New("user exists")
	// ErrUnknownRole: neither the file nor the built-ins define that role.
	ErrUnknownRole = errors.New("unknown role")
	// ErrInvalidID: the id is not 1–40 letters, digits, '.', '_', '@', '-'.
	ErrInvalidID = errors.New("invalid user id")
	// ErrInvalidLifetime: a sign-in link's lifetime is out of bounds.
	ErrInvalidLifetime = errors.New("invalid link lifetime")
)

// editError is a refusal with a message for people and a kind for code.
type editError struct {
	msg  string
	kind error
}

func (e *editError) Error() string { return e.msg }
func (e *editError) Unwrap() error { return e.kind }

func refuse(kind error, format string, args ...any) error {
	return &editError{msg: fmt.Sprintf(format, args...), kind: kind}
}

// DefaultBootstrapID is the id of the first user when none is given.
const DefaultBootstrapID = "admin"

// Bootstrap creates the users file with one admin called id (or
// DefaultBootstrapID) when there is no file, and returns that user's token —
// the only time it is ever seen. When a file is already there it creates
// nothing and returns Err: nil for a good file, the reason for a bad one.
// Two processes bootstrapping at once create one file between them.
func (s *Store) Bootstrap(id string) (token string, created bool, err error) {
	if id == "" {
		id = DefaultBootstrapID
	}
	if !validName(id) {
		return "", false, invalidID()
	}
	s.editMu.Lock()
	defer s.editMu.Unlock()
	if _, err := os.Lstat(s.path); err == nil {
		return "", false, s.Err()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("cannot look at the users file: %w", err)
	}
	token, digest, err := mint()
	if err != nil {
		return "", false, err
	}
	f := &fileData{users: []record{{id: id, roles: []string{access.RoleAdmin}, digest: digest}}}
	data, err := f.encode()
	if err != nil {
		return "", false, err
	}
	switch err := writeFile(s.path, data, true); {
	case errors.Is(err, fs.ErrExist):
		return "", false, s.Err()
	case err != nil:
		return "", false, err
	}
	return token, true, nil
}

// Add gives a new user one role and returns their token, which is shown
// this once and stored only as its hash. The role must be defined (by the
// file or a built-in) and the id must be new.
func (s *Store) Add(id, role string) (string, error) {
	if !validName(id) {
		return "", invalidID()
	}
	token, digest, err := mint()
	if err != nil {
		return "", err
	}
	err = s.edit(func(f *fileData) error {
		if role == "" {
			return refuse(ErrUnknownRole, "name a role for %s, e.g. %s", id, access.RoleMember)
		}
		if _, ok := f.rolesTable().Role(role); !ok {
			return refuse(ErrUnknownRole, "no role called %s", quotedName(role))
		}
		if f.find(id) >= 0 {
			return refuse(ErrUserExists, "there is already a user called %s; rotate their token or remove them first", id)
		}
		f.users = append(f.users, record{id: id, roles: []string{role}, digest: digest})
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// Remove deletes the user; their next lookup or command fails.
func (s *Store) Remove(id string) error {
	return s.edit(func(f *fileData) error {
		i := f.find(id)
		if i < 0 {
			return refuse(ErrUnknownUser, "no user called %s", quotedName(id))
		}
		f.users = append(f.users[:i], f.users[i+1:]...)
		return nil
	})
}

// Rotate gives the user a new token and returns it; the old one stops
// working at once.
func (s *Store) Rotate(id string) (string, error) {
	token, digest, err := mint()
	if err != nil {
		return "", err
	}
	err = s.edit(func(f *fileData) error {
		i := f.find(id)
		if i < 0 {
			return refuse(ErrUnknownUser, "no user called %s", quotedName(id))
		}
		f.users[i].digest = digest
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// MaxLinkLifetime bounds a sign-in link: long enough to open a page and
// sign in, short enough that a link pasted somewhere stops working.
const MaxLinkLifetime = 24 * time.Hour

// AddLink gives the user a short-lived token, good for lifetime (at most
// MaxLinkLifetime) beside their own, and returns it. It is stored as its
// hash, like every token; a connection signed in with it ends when it
// expires.
func (s *Store) AddLink(id string, lifetime time.Duration) (string, error) {
	if lifetime <= 0 || lifetime > MaxLinkLifetime {
		return "", refuse(ErrInvalidLifetime, "a sign-in link lasts more than 0 and at most %s", MaxLinkLifetime)
	}
	token, digest, err := mint()
	if err != nil {
		return "", err
	}
	expires := s.clock().Add(lifetime).Truncate(time.Second)
	err = s.edit(func(f *fileData) error {
		i := f.find(id)
		if i < 0 {
			return refuse(ErrUnknownUser, "no user called %s", quotedName(id))
		}
		f.users[i].links = append(f.users[i].links, link{digest: digest, expires: expires})
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

func invalidID() error {
	return refuse(ErrInvalidID, "a user id is 1 to %d letters, digits, '.', '_', '@' or '-', starting with a letter or digit", maxNameLen)
}

func mint() (string, [sha256.Size]byte, error) {
	token, err := NewToken()
	if err != nil {
		return "", [sha256.Size]byte{}, fmt.Errorf("cannot make a token: %w", err)
	}
	return token, sha256.Sum256([]byte(token)), nil
}

func (f *fileData) rolesTable() *access.Roles {
	roles, _ := f.table()
	return roles
}

// edit is one read-modify-write of the file. It reads the file afresh (not
// the cache), so an edit by another process in between is kept, and it
// refuses to touch a file it cannot trust: whoever broke it may be fixing it.
func (s *Store) edit(change func(f *fileData) error) error {
	s.editMu.Lock()
	defer s.editMu.Unlock()
	f, err := s.readForEdit()
	if err != nil {
		return err
	}
	if err := change(f); err != nil {
		return err
	}
	// Expired links are dead weight: each edit leaves them out.
	now := s.clock()
	for i := range f.users {
		live := f.users[i].links[:0]
		for _, l := range f.users[i].links {
			if now.Before(l.expires) {
				live = append(live, l)
			}
		}
		f.users[i].links = live
	}
	if err := f.checkUnique(); err != nil {
		return err
	}
	data, err := f.encode()
	if err != nil {
		return err
	}
	return writeFile(s.path, data, false)
}

// readForEdit returns the file's content; a missing file is an empty one,
// so `token add` works before the first `serve`.
func (s *Store) readForEdit() (*fileData, error) {
	fh, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &fileData{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the users file: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read the users file: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the users file: %w", err)
	}
	d, _, err := load(s.path, fi.Mode(), data)
	if err != nil {
		return nil, fmt.Errorf("the store will not change the users file: %w", err)
	}
	return d.file, nil
}

// writeFile replaces path with data, mode 0600, atomically: readers see the
// old file or the new one, never half of one. With exclusive it only
// creates, failing with fs.ErrExist if the file appeared meanwhile.
func writeFile(path string, data []byte, exclusive bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot make the directory for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer func() {
		// After a rename the name is gone and this is a no-op; after a link,
		// or a failure, it removes the temporary name.
		_ = os.Remove(tmp.Name())
	}()
	if err := writeAndClose(tmp, data); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if exclusive {
		// A hard link fails if the target exists, which makes "create unless
		// someone else just did" atomic, where a rename would replace.
		if err := os.Link(tmp.Name(), path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fs.ErrExist
			}
			return fmt.Errorf("cannot create %s: %w", path, err)
		}
	} else if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cannot replace %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

func writeAndClose(f *os.File, data []byte) error {
	// CreateTemp already uses 0600; saying so again guards against a
	// platform or a future change that does not.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes the rename itself durable. Best effort: some filesystems
// refuse to sync a directory, and the file is already complete either way.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
