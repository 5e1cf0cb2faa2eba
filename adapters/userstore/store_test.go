package userstore_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/domain/access"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// open returns a store on a users file in a fresh directory.
func open(t *testing.T) (*userstore.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.yaml")
	s, err := userstore.Open(path)
	require.NoError(t, err)
	return s, path
}

// writeInPlace edits the file the way a person's editor might: rewriting
// the same inode, possibly within the same timestamp tick as the last write.
func writeInPlace(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestBootstrapCreatesOneAdminAndShowsItsTokenOnce(t *testing.T) {
	s, path := open(t)
	require.ErrorIs(t, s.Err(), fs.ErrNotExist)

	token, created, err := s.Bootstrap("")
	require.NoError(t, err)
	require.True(t, created)
	require.True(t, strings.HasPrefix(token, userstore.TokenPrefix))
	require.NoError(t, s.Err())

	p, ok := s.Lookup(token)
	require.True(t, ok)
	require.Equal(t, userstore.DefaultBootstrapID, p.ID)
	require.Equal(t, []string{access.RoleAdmin}, p.Roles)
	require.False(t, p.Root)
	require.True(t, s.Roles().Allows(p, access.ConfigChange))
	require.Equal(t, fs.FileMode(0o600), mode(t, path))

	again, created, err := s.Bootstrap("")
	require.NoError(t, err)
	require.False(t, created)
	require.Empty(t, again)
}

func TestBootstrapUsesTheGivenID(t *testing.T) {
	s, _ := open(t)
	token, created, err := s.Bootstrap("ana")
	require.NoError(t, err)
	require.True(t, created)
	p, ok := s.Lookup(token)
	require.True(t, ok)
	require.Equal(t, "ana", p.ID)
}

func TestBootstrapBySeveralStoresAtOnceCreatesOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.yaml")
	const n = 8
	tokens := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := userstore.Open(path)
			require.NoError(t, err)
			tok, _, err := s.Bootstrap("")
			require.NoError(t, err)
			tokens[i] = tok
		})
	}
	wg.Wait()
	var minted []string
	for _, tok := range tokens {
		if tok != "" {
			minted = append(minted, tok)
		}
	}
	require.Len(t, minted, 1)
	s, err := userstore.Open(path)
	require.NoError(t, err)
	_, ok := s.Lookup(minted[0])
	require.True(t, ok)
}

func TestEveryWriteLeavesTheFileMode0600(t *testing.T) {
	s, path := open(t)
	_, _, err := s.Bootstrap("")
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), mode(t, path))

	// A file someone loosened is tightened again by the next write.
	require.NoError(t, os.Chmod(path, 0o644))
	_, err = s.Add("sam", access.RoleMember)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), mode(t, path))

	_, err = s.Rotate("sam")
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), mode(t, path))

	require.NoError(t, s.Remove("sam"))
	require.Equal(t, fs.FileMode(0o600), mode(t, path))

	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}

func TestFileHoldsHashesAndNeverAPlainToken(t *testing.T) {
	s, path := open(t)
	admin, _, err := s.Bootstrap("")
	require.NoError(t, err)
	sam, err := s.Add("sam", access.RoleMember)
	require.NoError(t, err)
	old := sam
	sam, err = s.Rotate("sam")
	require.NoError(t, err)

	content := read(t, path)
	for _, tok := range []string{admin, sam, old} {
		require.NotContains(t, content, tok)
		require.NotContains(t, content, strings.TrimPrefix(tok, userstore.TokenPrefix))
	}
	require.Contains(t, content, userstore.HashToken(admin))
	require.Contains(t, content, userstore.HashToken(sam))
	require.NotContains(t, content, userstore.HashToken(old))
}

func TestAddRefusesARoleNothingDefines(t *testing.T) {
	s, _ := open(t)
	_, err := s.Add("sam", "wizard")
	require.EqualError(t, err, "no role called wizard")
	require.ErrorIs(t, err, userstore.ErrUnknownRole)
	_, err = s.Add("sam", "")
	require.ErrorIs(t, err, userstore.ErrUnknownRole)
}

func TestAddRefusesAnIDAlreadyInTheFile(t *testing.T) {
	s, _ := open(t)
	first, err := s.Add("sam", access.RoleMember)
	require.NoError(t, err)
	_, err = s.Add("sam", access.RoleGuest)
	require.ErrorIs(t, err, userstore.ErrUserExists)
	require.Contains(t, err.Error(), "already a user called sam")

	p, ok := s.Lookup(first)
	require.True(t, ok)
	require.Equal(t, []string{access.RoleMember}, p.Roles, "the refused add changed nothing")
}

func TestAddRefusesAnIDThatCannotBeShownSafely(t *testing.T) {
	s, _ := open(t)
	for _, id := range []string{"", "ana smith", "-x", "a:b", strings.Repeat("a", 41), "ünï"} {
		_, err := s.Add(id, access.RoleMember)
		require.ErrorIs(t, err, userstore.ErrInvalidID, "%q", id)
	}
}

func TestAddAcceptsARoleTheFileDefines(t *testing.T) {
	s, path := open(t)
	writeInPlace(t, path, "roles:\n  typist: [terminal:output, terminal:input]\nusers: []\n")
	token, err := s.Add("sam", "typist")
	require.NoError(t, err)
	p, ok := s.Lookup(token)
	require.True(t, ok)
	require.True(t, s.Roles().Allows(p, access.TerminalInput))
	require.False(t, s.Roles().Allows(p, access.TerminalCreate))
	require.Contains(t, read(t, path), "typist", "the file's roles survive the rewrite")
}

func TestAddCreatesTheFileWhenThereIsNone(t *testing.T) {
	s, path := open(t)
	token, err := s.Add("sam", access.RoleMember)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), mode(t, path))
	_, ok := s.Lookup(token)
	require.True(t, ok)
}

func TestLookupRefusesEmptyAndUnknownTokens(t *testing.T) {
	s, _ := open(t)
	_, err := s.Add("sam", access.RoleMember)
	require.NoError(t, err)
	for _, tok := range []string{"", "sg_nope", userstore.HashToken("x")} {
		_, ok := s.Lookup(tok)
		require.False(t, ok, "%q", tok)
	}
}

func TestLookupFindsTheRightUserAmongMany(t *testing.T) {
	s, _ := open(t)
	tokens := map[string]string{}
	for i := range 10 {
		id := fmt.Sprintf("user%d", i)
		tok, err := s.Add(id, access.RoleMember)
		require.NoError(t, err)
		tokens[id] = tok
	}
	for id, tok := range tokens {
		p, ok := s.Lookup(tok)
		require.True(t, ok)
		require.Equal(t, id, p.ID)
	}
}

func TestRemovedUserIsUnknownOnTheNextLookupInAnotherProcess(t *testing.T) {
	daemon, path := open(t)
	token, err := daemon.Add("sam", access.RoleMember)
	require.NoError(t, err)
	_, ok := daemon.Lookup(token)
	require.True(t, ok)

	cli, err := userstore.Open(path)
	require.NoError(t, err)
	require.NoError(t, cli.Remove("sam"))

	_, ok = daemon.Lookup(token)
	require.False(t, ok)
	_, ok = daemon.Principal("sam")
	require.False(t, ok)

	err = cli.Remove("sam")
	require.ErrorIs(t, err, userstore.ErrUnknownUser)
	require.EqualError(t, err, "no user called sam")
}

func TestRoleChangedByHandTakesEffectOnTheNextCheck(t *testing.T) {
	s, path := open(t)
	hash := userstore.HashToken("sg_sam")
	writeInPlace(t, path, "users:\n  - {id: sam, roles: [guest], token: "+hash+"}\n")

	p, ok := s.Principal("sam")
	require.True(t, ok)
	require.False(t, s.Roles().Allows(p, access.TerminalInput))

	// Same inode, same size, likely the same timestamp tick: only the bytes differ.
	writeInPlace(t, path, "users:\n  - {id: sam, roles: [member], token: "+hash+"}\n")
	p, ok = s.Principal("sam")
	require.True(t, ok)
	require.Equal(t, []string{access.RoleMember}, p.Roles)
	require.True(t, s.Roles().Allows(p, access.TerminalInput))
}

func TestRoleRedefinedInTheFileTakesEffectOnTheNextCheck(t *testing.T) {
	s, path := open(t)
	hash := userstore.HashToken("sg_sam")
	writeInPlace(t, path, "roles: {typist: [terminal:output]}\nusers: [{id: sam, roles: [typist], token: "+hash+"}]\n")
	p, ok := s.Lookup("sg_sam")
	require.True(t, ok)
	require.False(t, s.Roles().Allows(p, access.TerminalInput))

	writeInPlace(t, path, "roles: {typist: [terminal:write]}\nusers: [{id: sam, roles: [typist], token: "+hash+"}]\n")
	require.True(t, s.Roles().Allows(p, access.TerminalInput))
	require.False(t, s.Roles().Allows(p, access.TerminalOutput))
}

func TestRotateRetiresTheOldToken(t *testing.T) {
	s, _ := open(t)
	old, err := s.Add("sam", access.RoleMember)
	require.NoError(t, err)
	fresh, err := s.Rotate("sam")
	require.NoError(t, err)
	require.NotEqual(t, old, fresh)
	_, ok := s.Lookup(old)
	require.False(t, ok)
	p, ok := s.Lookup(fresh)
	require.True(t, ok)
	require.Equal(t, "sam", p.ID)

	_, err = s.Rotate("nobody")
	require.ErrorIs(t, err, userstore.ErrUnknownUser)
}

func TestListShowsUsersInFileOrderWithoutSecrets(t *testing.T) {
	s, _ := open(t)
	_, _, err := s.Bootstrap("ana")
	require.NoError(t, err)
	_, err = s.Add("sam", access.RoleChatAgent)
	require.NoError(t, err)
	list, err := s.List()
	require.NoError(t, err)
	require.Equal(t, []access.Principal{
		{ID: "ana", Roles: []string{access.RoleAdmin}},
		{ID: "sam", Roles: []string{access.RoleChatAgent}},
	}, list)
}

func TestMissingFileAnswersNobody(t *testing.T) {
	s, path := open(t)
	_, ok := s.Lookup("sg_anything")
	require.False(t, ok)
	_, err := s.List()
	require.ErrorIs(t, err, fs.ErrNotExist)

	token, err := s.Add("sam", access.RoleMember)
	require.NoError(t, err)
	require.NoError(t, os.Remove(path))
	_, ok = s.Lookup(token)
	require.False(t, ok, "deleting the file lets nobody in")
	require.ErrorIs(t, s.Err(), fs.ErrNotExist)
}

func TestOpenRefusesAnEmptyPath(t *testing.T) {
	_, err := userstore.Open("")
	require.Error(t, err)
}

var malformedFiles = map[string]string{
	"not yaml":              "users: [\n",
	"not a mapping":         "- ana\n",
	"unknown top-level key": "people: []\n",
	"unknown record key":    "users:\n  - {id: ana, roles: [admin], token: %s, trustToken: true}\n",
	"plain token":           "users:\n  - {id: ana, roles: [admin], token: sg_plain}\n",
	"hash too short":        "users:\n  - {id: ana, roles: [admin], token: sha256:abcd}\n",
	"missing token":         "users:\n  - {id: ana, roles: [admin]}\n",
	"missing id":            "users:\n  - {roles: [admin], token: %s}\n",
	"duplicate id":          "users:\n  - {id: ana, roles: [admin], token: %s}\n  - {id: ana, roles: [guest], token: sha256:" + strings.Repeat("0", 64) + "}\n",
	"shared token":          "users:\n  - {id: ana, roles: [admin], token: %[1]s}\n  - {id: sam, roles: [guest], token: %[1]s}\n",
	"two documents":         "users: []\n---\nusers: []\n",
	"alias":                 "roles: {a: &g [terminal:read], b: *g}\nusers: []\n",
	"roles as a list":       "roles: [admin]\nusers: []\n",
	"token as a list":       "users:\n  - {id: ana, roles: [admin], token: [%s]}\n",
	"duplicate key":         "users: []\nusers: []\n",
	"id with a space":       "users:\n  - {id: ana smith, roles: [admin], token: %s}\n",
}

func TestMalformedFileLetsNobodyInAndIsNeverOverwritten(t *testing.T) {
	for name, content := range malformedFiles {
		t.Run(name, func(t *testing.T) {
			s, path := open(t)
			good, _, err := s.Bootstrap("ana")
			require.NoError(t, err)
			_, ok := s.Lookup(good)
			require.True(t, ok)

			if strings.Contains(content, "%") {
				content = fmt.Sprintf(content, userstore.HashToken(good))
			}
			writeInPlace(t, path, content)

			_, ok = s.Lookup(good)
			require.False(t, ok, "a broken file fails closed")
			_, ok = s.Principal("ana")
			require.False(t, ok)
			require.False(t, s.Roles().Allows(access.Principal{ID: "ana", Roles: []string{access.RoleAdmin}}, access.TerminalOutput))
			var bad *userstore.MalformedError
			require.ErrorAs(t, s.Err(), &bad)
			_, err = s.List()
			require.ErrorAs(t, err, &bad)

			_, err = s.Add("sam", access.RoleMember)
			require.ErrorAs(t, err, &bad)
			require.ErrorAs(t, s.Remove("ana"), &bad)
			_, err = s.Rotate("ana")
			require.ErrorAs(t, err, &bad)
			tok, created, err := s.Bootstrap("")
			require.ErrorAs(t, err, &bad)
			require.False(t, created)
			require.Empty(t, tok)

			require.Equal(t, content, read(t, path), "the store never rewrites a broken file")

			// Errors describe the problem without quoting a token or hash.
			for _, e := range []error{s.Err(), err} {
				require.NotContains(t, e.Error(), good)
				require.NotContains(t, e.Error(), userstore.HashToken(good)[len("sha256:"):])
			}
		})
	}
}

func TestFixedFileIsPickedUpWithoutReopening(t *testing.T) {
	s, path := open(t)
	good, _, err := s.Bootstrap("ana")
	require.NoError(t, err)
	fixed := read(t, path)
	writeInPlace(t, path, "users: [\n")
	_, ok := s.Lookup(good)
	require.False(t, ok)
	writeInPlace(t, path, fixed)
	_, ok = s.Lookup(good)
	require.True(t, ok)
	require.NoError(t, s.Err())
}

func TestFileWritableByOthersIsNotTrusted(t *testing.T) {
	s, path := open(t)
	good, _, err := s.Bootstrap("ana")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(path, 0o666))
	_, ok := s.Lookup(good)
	require.False(t, ok)
	require.ErrorContains(t, s.Err(), "writable by other accounts")

	require.NoError(t, os.Chmod(path, 0o644))
	_, ok = s.Lookup(good)
	require.True(t, ok, "readable by others is only a warning")
	require.Contains(t, strings.Join(s.Warnings(), "\n"), "readable by other accounts")
}

func TestWarningsNameDroppedGrantsAndUndefinedRoles(t *testing.T) {
	s, path := open(t)
	hash := userstore.HashToken("sg_sam")
	writeInPlace(t, path, "roles:\n  typist: [terminal:output, terminal:bogus, read:computer]\nusers:\n  - {id: sam, roles: [typist, wizard], token: "+hash+"}\n")
	require.NoError(t, s.Err())
	w := strings.Join(s.Warnings(), "\n")
	require.Contains(t, w, `role typist: "terminal:bogus" names an operation terminal does not have`)
	require.Contains(t, w, `role typist: "read:computer" names a group as its subject`)
	require.Contains(t, w, "user sam: no role called wizard")

	p, ok := s.Lookup("sg_sam")
	require.True(t, ok)
	require.True(t, s.Roles().Allows(p, access.TerminalOutput), "the good grants still count")
}

func TestJSONUsersFileInAhpdShapeReads(t *testing.T) {
	s, path := open(t)
	writeInPlace(t, path, fmt.Sprintf(`{
	"roles": { "viewer": ["*:read"], "typist": ["terminal:output", "terminal:input"] },
	"users": [
		{ "id": "ana", "roles": ["admin"], "token": %q },
		{ "id": "sam", "roles": ["typist"], "token": %q }
	]
}
`, userstore.HashToken("sg_ana"), userstore.HashToken("sg_sam")))
	require.NoError(t, s.Err())
	p, ok := s.Lookup("sg_sam")
	require.True(t, ok)
	require.Equal(t, "sam", p.ID)
	require.True(t, s.Roles().Allows(p, access.TerminalInput))
	require.False(t, s.Roles().Allows(p, access.TerminalCreate))
}

func TestConcurrentEditsAndLookupsAreSafe(t *testing.T) {
	s, _ := open(t)
	admin, _, err := s.Bootstrap("")
	require.NoError(t, err)

	const writers, readers, each = 4, 4, 10
	tokens := make(chan [2]string, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				tok, err := s.Add(id, access.RoleMember)
				if err != nil {
					t.Errorf("add %s: %v", id, err)
					return
				}
				tokens <- [2]string{id, tok}
			}
		})
	}
	done := make(chan struct{})
	var readersWG sync.WaitGroup
	for range readers {
		readersWG.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				p, ok := s.Lookup(admin)
				if !ok || p.ID != userstore.DefaultBootstrapID {
					t.Errorf("admin lookup failed during edits")
					return
				}
				_ = s.Roles().Allows(p, access.TerminalInput)
				_, _ = s.Principal("w0-0")
			}
		})
	}
	wg.Wait()
	close(done)
	readersWG.Wait()
	close(tokens)

	for pair := range tokens {
		p, ok := s.Lookup(pair[1])
		require.True(t, ok, pair[0])
		require.Equal(t, pair[0], p.ID)
	}
	list, err := s.List()
	require.NoError(t, err)
	require.Len(t, list, 1+writers*each, "no edit was lost")
}

func TestErrorsOfEditsAreTyped(t *testing.T) {
	s, _ := open(t)
	err := s.Remove("ghost")
	require.True(t, errors.Is(err, userstore.ErrUnknownUser))
	require.False(t, errors.Is(err, userstore.ErrUnknownRole))
}

// backdate sets the file's times well outside the window in which a stat
// is not trusted alone.
func backdate(t *testing.T, path string, when time.Time) {
	t.Helper()
	require.NoError(t, os.Chtimes(path, when, when))
}

func TestEditThatKeepsSizeAndTimeIsSeenOnTheNextCheck(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only the inotify watch sees a change that leaves the stat as it was")
	}
	s, path := open(t)
	hash := userstore.HashToken("sg_sam")
	old := time.Now().Add(-time.Hour)
	writeInPlace(t, path, "users:\n  - {id: sam, roles: [guest], token: "+hash+"}\n")
	backdate(t, path, old)
	p, ok := s.Principal("sam")
	require.True(t, ok)
	require.Equal(t, []string{access.RoleGuest}, p.Roles)

	// Same inode, same size, and the old time put back: a stat sees no change.
	writeInPlace(t, path, "users:\n  - {id: sam, roles: [admin], token: "+hash+"}\n")
	backdate(t, path, old)
	p, ok = s.Principal("sam")
	require.True(t, ok)
	require.Equal(t, []string{access.RoleAdmin}, p.Roles)
}

func TestFolderReplacedUnderTheStoreIsFollowed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, "users.yaml")
	writeInPlace(t, path, "users:\n  - {id: sam, roles: [guest], token: "+userstore.HashToken("sg_sam")+"}\n")
	s, err := userstore.Open(path)
	require.NoError(t, err)
	_, ok := s.Lookup("sg_sam")
	require.True(t, ok)

	// The whole folder goes, and comes back with another file.
	require.NoError(t, os.RemoveAll(dir))
	_, ok = s.Lookup("sg_sam")
	require.False(t, ok, "a removed file lets nobody in")
	require.NoError(t, os.Mkdir(dir, 0o700))
	writeInPlace(t, path, "users:\n  - {id: ana, roles: [member], token: "+userstore.HashToken("sg_ana")+"}\n")
	p, ok := s.Lookup("sg_ana")
	require.True(t, ok)
	require.Equal(t, "ana", p.ID)
	_, ok = s.Lookup("sg_sam")
	require.False(t, ok)

	// And the new folder's changes are seen like the first one's.
	writeInPlace(t, path, "users:\n  - {id: ana, roles: [guest], token: "+userstore.HashToken("sg_ana")+"}\n")
	p, ok = s.Lookup("sg_ana")
	require.True(t, ok)
	require.Equal(t, []string{access.RoleGuest}, p.Roles)
}

func TestClosedStoreStillSeesChanges(t *testing.T) {
	s, path := open(t)
	hash := userstore.HashToken("sg_sam")
	writeInPlace(t, path, "users:\n  - {id: sam, roles: [guest], token: "+hash+"}\n")
	_, ok := s.Principal("sam")
	require.True(t, ok)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close twice is fine")

	writeInPlace(t, path, "users:\n  - {id: sam, roles: [member], token: "+hash+"}\n")
	p, ok := s.Principal("sam")
	require.True(t, ok)
	require.Equal(t, []string{access.RoleMember}, p.Roles)
}

func TestRotatedTokenChangesThePrincipalsCredential(t *testing.T) {
	s, err := userstore.Open(filepath.Join(t.TempDir(), "users.yaml"))
	require.NoError(t, err)
	tok, err := s.Add("sam", "member")
	require.NoError(t, err)
	before, ok := s.Lookup(tok)
	require.True(t, ok)
	require.NotEmpty(t, before.Credential)
	byID, ok := s.Principal("sam")
	require.True(t, ok)
	require.Equal(t, before.Credential, byID.Credential)

	fresh, err := s.Rotate("sam")
	require.NoError(t, err)
	byID, ok = s.Principal("sam")
	require.True(t, ok)
	require.NotEqual(t, before.Credential, byID.Credential)
	after, ok := s.Lookup(fresh)
	require.True(t, ok)
	require.Equal(t, byID.Credential, after.Credential)
	require.NotContains(t, after.Credential, fresh)
}

// TestPrincipalRolesIsPrincipalAndRolesFromOneReading: the record and the
// roles table come together, and an edit by hand is in both on the next
// call.
func TestPrincipalRolesIsPrincipalAndRolesFromOneReading(t *testing.T) {
	s, path := open(t)
	hash := userstore.HashToken("sg_sam")
	writeInPlace(t, path, "roles: {typist: [terminal:output]}\nusers: [{id: sam, roles: [typist], token: "+hash+"}]\n")

	p, roles, ok := s.PrincipalRoles("sam")
	require.True(t, ok)
	want, _ := s.Principal("sam")
	require.Equal(t, want, p)
	require.True(t, roles.Allows(p, access.TerminalOutput))
	require.False(t, roles.Allows(p, access.TerminalInput))

	writeInPlace(t, path, "roles: {typist: [terminal:write]}\nusers: [{id: sam, roles: [typist], token: "+hash+"}]\n")
	p, roles, ok = s.PrincipalRoles("sam")
	require.True(t, ok)
	require.True(t, roles.Allows(p, access.TerminalInput), "the redefined role, on the next call")

	_, roles, ok = s.PrincipalRoles("nobody-here")
	require.False(t, ok)
	require.NotNil(t, roles, "the roles come without a record too")
}
