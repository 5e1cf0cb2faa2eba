package userstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/shellgate/shellgate/domain/access"
)

// The users file is YAML. Because YAML 1.2 is a superset of JSON, a JSON
// file in ahpd's shape reads the same; the store always writes YAML back.
//
//	# shellgate users file
//	roles:                      # optional; a name here replaces a built-in
//	  viewer: ["*:read"]
//	  typist: [terminal:output, terminal:input]
//	users:
//	  - id: ana
//	    roles: [admin]
//	    token: sha256:<64 hex digits>
//
// Nothing else is allowed: an unknown key, a missing id or token, a token
// that is not a sha256 hash, two records with one id or one token, an alias,
// or a second document make the file malformed, and a malformed file lets
// nobody in. A grant that does not parse, and a role nothing defines, only
// lose what they would have granted and are reported as warnings (D1).

// maxFileSize bounds what is read: a users file is a few kilobytes, and a
// huge one is a mistake better refused than parsed on every command.
const maxFileSize = 1 << 20

// fileData is the content of a users file.
type fileData struct {
	// roles are the file's own roles, grants kept as written so rewriting
	// the file keeps a person's typo for them to fix rather than losing it.
	roles map[string][]string
	users []record
}

// record is one user; the token is only ever held as its hash.
type record struct {
	id     string
	roles  []string
	digest [sha256.Size]byte
	// links are short-lived extra tokens (sign-in links), each good until
	// it expires; an edit of the file drops the expired ones.
	links []link
}

// link is one short-lived token of a user, held as its hash.
type link struct {
	digest  [sha256.Size]byte
	expires time.Time
}

// MalformedError says why the users file cannot be trusted. It never
// quotes a token or a hash.
type MalformedError struct {
	// Path is the users file.
	Path string
	// Line is where the problem is, or 0 when it is the file as a whole.
	Line int
	// Reason says what is wrong.
	Reason string
}

// Error names the file, the line and the problem.
func (e *MalformedError) Error() string {
	where := e.Path
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	return where + ": " + e.Reason + "; nobody can sign in until it is fixed"
}

func malformed(line int, format string, args ...any) *MalformedError {
	return &MalformedError{Line: line, Reason: fmt.Sprintf(format, args...)}
}

// parse reads a users file. An error means the file must not be trusted;
// an empty file (or one holding only comments) is a directory of nobody.
func parse(data []byte) (*fileData, error) {
	if len(data) > maxFileSize {
		return nil, malformed(0, "is larger than %d bytes", maxFileSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &fileData{}, nil
		}
		return nil, malformed(0, "is not YAML (%s)", yamlReason(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, malformed(extra.Line, "holds more than one YAML document")
	}
	root := doc.Content[0]
	if isNull(root) {
		return &fileData{}, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, malformed(root.Line, "must be a mapping with roles and users")
	}
	f := &fileData{}
	err := eachPair(root, "the file", func(key string, val *yaml.Node) error {
		switch key {
		case "roles":
			return f.readRoles(val)
		case "users":
			return f.readUsers(val)
		default:
			return nil
		}
	}, "roles", "users")
	if err != nil {
		return nil, err
	}
	return f, f.checkUnique()
}

func (f *fileData) readRoles(n *yaml.Node) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return malformed(n.Line, "roles must map each role name to a list of grants")
	}
	f.roles = map[string][]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, err := scalar(k, "a role name")
		if err != nil {
			return err
		}
		if !validName(name) {
			return malformed(k.Line, "a role name must be 1 to %d letters, digits, '.', '_', '@' or '-'", maxNameLen)
		}
		if _, dup := f.roles[name]; dup {
			return malformed(k.Line, "role %s is defined twice", name)
		}
		grants, err := scalars(v, "role "+name+"'s grants")
		if err != nil {
			return err
		}
		f.roles[name] = grants
	}
	return nil
}

func (f *fileData) readUsers(n *yaml.Node) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return malformed(n.Line, "users must be a list of records with id, roles and token")
	}
	for i, item := range n.Content {
		what := fmt.Sprintf("user %d", i+1)
		if item.Kind != yaml.MappingNode {
			return malformed(item.Line, "%s must be a record with id, roles and token", what)
		}
		var r record
		var haveToken bool
		err := eachPair(item, what, func(key string, val *yaml.Node) error {
			var err error
			switch key {
			case "id":
				r.id, err = scalar(val, what+"'s id")
				if err == nil && !validName(r.id) {
					err = malformed(val.Line, "%s's id must be 1 to %d letters, digits, '.', '_', '@' or '-'", what, maxNameLen)
				}
			case "roles":
				r.roles, err = scalars(val, what+"'s roles")
			case "token":
				var s string
				if s, err = scalar(val, what+"'s token"); err == nil {
					r.digest, err = parseDigest(s)
					if err != nil {
						err = malformed(val.Line, "%s's token must be sha256:<64 hex digits>; the file stores hashes only", what)
					}
					haveToken = true
				}
			case "links":
				r.links, err = readLinks(val, what)
			}
			return err
		}, "id", "roles", "token", "links")
		if err != nil {
			return err
		}
		if r.id == "" {
			return malformed(item.Line, "%s has no id", what)
		}
		if !haveToken {
			return malformed(item.Line, "user %s has no token", r.id)
		}
		f.users = append(f.users, r)
	}
	return nil
}

// readLinks reads a user's short-lived tokens: a list of {token, expires}.
func readLinks(n *yaml.Node, what string) ([]link, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, malformed(n.Line, "%s's links must be a list of {token, expires}", what)
	}
	var out []link
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			return nil, malformed(item.Line, "%s's links must be a list of {token, expires}", what)
		}
		var l link
		var haveToken, haveExpiry bool
		err := eachPair(item, what+"'s link", func(key string, val *yaml.Node) error {
			s, err := scalar(val, what+"'s link "+key)
			if err != nil {
				return err
			}
			switch key {
			case "token":
				if l.digest, err = parseDigest(s); err != nil {
					return malformed(val.Line, "%s's link token must be sha256:<64 hex digits>; the file stores hashes only", what)
				}
				haveToken = true
			case "expires":
				if l.expires, err = time.Parse(time.RFC3339, s); err != nil {
					return malformed(val.Line, "%s's link expires must be a time such as 2026-12-01T15:04:05Z", what)
				}
				haveExpiry = true
			}
			return nil
		}, "token", "expires")
		if err != nil {
			return nil, err
		}
		if !haveToken || !haveExpiry {
			return nil, malformed(item.Line, "%s's link needs a token and an expiry", what)
		}
		out = append(out, l)
	}
	return out, nil
}

// checkUnique refuses two records one lookup could not tell apart.
func (f *fileData) checkUnique() error {
	ids := map[string]bool{}
	tokens := map[[sha256.Size]byte]string{}
	for _, u := range f.users {
		if ids[u.id] {
			return malformed(0, "user %s appears twice", u.id)
		}
		ids[u.id] = true
		for _, d := range u.digests() {
			if other, dup := tokens[d]; dup {
				return malformed(0, "users %s and %s have the same token; rotate one of them", other, u.id)
			}
			tokens[d] = u.id
		}
	}
	return nil
}

// table builds the roles table from the file's roles, dropping the grants
// that do not parse, and says what was dropped or is undefined.
func (f *fileData) table() (*access.Roles, []string) {
	var warnings []string
	names := make([]string, 0, len(f.roles))
	for name := range f.roles {
		names = append(names, name)
	}
	sort.Strings(names)
	custom := make([]access.Role, 0, len(names))
	for _, name := range names {
		role := access.Role{Name: name}
		for _, s := range f.roles[name] {
			g, err := access.ParseGrant(s)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("role %s: %v; that grant is ignored", name, err))
				continue
			}
			role.Grants = append(role.Grants, g)
		}
		custom = append(custom, role)
	}
	roles := access.NewRoles(custom...)
	for _, u := range f.users {
		for _, r := range u.roles {
			if _, ok := roles.Role(r); !ok {
				warnings = append(warnings, fmt.Sprintf("user %s: no role called %s; it grants nothing", u.id, quotedName(r)))
			}
		}
	}
	if len(f.users) == 0 {
		warnings = append(warnings, "the users file names nobody, so nobody can sign in")
	}
	return roles, warnings
}

// fileHeader opens every file the store writes.
const fileHeader = `# shellgate users file. Tokens are stored only as sha256 hashes.
# Manage it with: shellgate token add|list|remove|rotate
`

type yamlUser struct {
	ID    string     `yaml:"id"`
	Roles flowList   `yaml:"roles"`
	Token string     `yaml:"token"`
	Links []yamlLink `yaml:"links,omitempty"`
}

type yamlLink struct {
	Token   string `yaml:"token"`
	Expires string `yaml:"expires"`
}

type yamlFile struct {
	Roles map[string]flowList `yaml:"roles,omitempty"`
	Users []yamlUser          `yaml:"users"`
}

// flowList is written on one line, `[a, b]`, the way people write grants.
type flowList []string

// MarshalYAML writes the list in flow style; each item is tagged as a
// string so that one reading like a number, a boolean or null is quoted.
func (l flowList) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range l {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	}
	return n, nil
}

// encode writes the file back; parse(encode(f)) is f.
func (f *fileData) encode() ([]byte, error) {
	out := yamlFile{Roles: map[string]flowList{}, Users: []yamlUser{}}
	for name, grants := range f.roles {
		out.Roles[name] = grants
	}
	for _, u := range f.users {
		y := yamlUser{ID: u.id, Roles: u.roles, Token: formatDigest(u.digest)}
		for _, l := range u.links {
			y.Links = append(y.Links, yamlLink{Token: formatDigest(l.digest), Expires: l.expires.UTC().Format(time.RFC3339)})
		}
		out.Users = append(out.Users, y)
	}
	var buf bytes.Buffer
	buf.WriteString(fileHeader)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		// Only strings go in, so this is a bug; the message names no value.
		return nil, errors.New("cannot encode the users file")
	}
	if err := enc.Close(); err != nil {
		return nil, errors.New("cannot encode the users file")
	}
	return buf.Bytes(), nil
}

func (f *fileData) clone() *fileData {
	c := &fileData{users: make([]record, len(f.users))}
	if f.roles != nil {
		c.roles = make(map[string][]string, len(f.roles))
		for k, v := range f.roles {
			c.roles[k] = append([]string(nil), v...)
		}
	}
	for i, u := range f.users {
		c.users[i] = record{id: u.id, roles: append([]string(nil), u.roles...), digest: u.digest, links: append([]link(nil), u.links...)}
	}
	return c
}

func (f *fileData) find(id string) int {
	for i, u := range f.users {
		if u.id == id {
			return i
		}
	}
	return -1
}

// eachPair walks a mapping, refusing aliases, non-string and repeated keys
// and any key not in allowed, then calls fn for each allowed one.
func eachPair(n *yaml.Node, what string, fn func(key string, val *yaml.Node) error, allowed ...string) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key, err := scalar(k, "a key in "+what)
		if err != nil {
			return err
		}
		if !contains(allowed, key) {
			return malformed(k.Line, "%s has an unknown key %s (known: %s)", what, quotedName(key), strings.Join(allowed, ", "))
		}
		if seen[key] {
			return malformed(k.Line, "%s has %s twice", what, key)
		}
		seen[key] = true
		if v.Kind == yaml.AliasNode {
			return malformed(v.Line, "%s: an alias is not allowed here; write the value out", what)
		}
		if err := fn(key, v); err != nil {
			return err
		}
	}
	return nil
}

func scalar(n *yaml.Node, what string) (string, error) {
	switch {
	case n.Kind == yaml.AliasNode:
		return "", malformed(n.Line, "%s: an alias is not allowed here; write the value out", what)
	case n.Kind != yaml.ScalarNode:
		return "", malformed(n.Line, "%s must be a single value", what)
	case isNull(n):
		return "", nil
	}
	return n.Value, nil
}

func scalars(n *yaml.Node, what string) ([]string, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind == yaml.AliasNode {
		return nil, malformed(n.Line, "%s: an alias is not allowed here; write the value out", what)
	}
	if n.Kind != yaml.SequenceNode {
		return nil, malformed(n.Line, "%s must be a list", what)
	}
	out := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		s, err := scalar(item, what)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// yamlReason keeps the parser's structural complaint but cuts it at the
// first quote: a few of its messages quote text from the file, and the
// file sits next to token hashes.
func yamlReason(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.IndexAny(msg, "'`\""); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	return msg
}

// maxNameLen bounds ids and role names. Names show up in refusals and logs
// as they are, so they are kept to a safe alphabet and kept shorter than a
// token (46 characters), which can then never pass for a name.
const maxNameLen = 40

func validName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || strings.IndexByte("._@-", c) < 0) {
			return false
		}
	}
	return true
}

// quotedName is a name fit for a message: itself when valid, otherwise a
// placeholder, so nothing that could be a secret is echoed.
func quotedName(s string) string {
	if validName(s) {
		return s
	}
	return "(a name not shown)"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

const digestPrefix = "sha256:"

func parseDigest(s string) ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	hexPart, ok := strings.CutPrefix(s, digestPrefix)
	if !ok || len(hexPart) != hex.EncodedLen(sha256.Size) {
		return d, errors.New("not a sha256 digest")
	}
	if _, err := hex.Decode(d[:], []byte(hexPart)); err != nil {
		return d, errors.New("not a sha256 digest")
	}
	return d, nil
}

func formatDigest(d [sha256.Size]byte) string {
	return digestPrefix + hex.EncodeToString(d[:])
}

// digests are every token hash of the record: its own, then its links'.
func (r record) digests() [][sha256.Size]byte {
	out := [][sha256.Size]byte{r.digest}
	for _, l := range r.links {
		out = append(out, l.digest)
	}
	return out
}
