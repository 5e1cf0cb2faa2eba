// Package access decides who may do what: operations, grants, roles and
// principals (generation 3 of ahpd's grant model, with shellgate's own
// subjects; decisions D1–D3 in docs/protocol.md).
//
// An operation is `<subject>:<name>`, e.g. `terminal:input`. A grant is
// `<subject>:<operation>` where the operation may also be one of the
// subject's two groups, `read` or `write`, and either position may be `*`.
// A role is a named list of grants; a principal holds roles by name and the
// Roles table turns those names into grants at the moment of asking, so a
// role changed in the users file applies to the very next check.
//
// The package is pure: no I/O, no goroutines, no clock.
package access

import "strings"

// Group names and the wildcard; they are never operations themselves.
const (
	// GroupRead is the group of a subject's operations that only look.
	GroupRead = "read"
	// GroupWrite is the group of a subject's operations that change things.
	GroupWrite = "write"
	// Wildcard stands for every subject or every operation.
	Wildcard = "*"
)

// Subject is a kind of thing operations act on, with its operations split
// into the read and the write group.
type Subject struct {
	// Name is the subject as written in grants, e.g. "terminal".
	Name string
	// Read lists the operations the subject's read group holds.
	Read []string
	// Write lists the operations the subject's write group holds.
	Write []string
}

// Has reports whether name is one of the subject's operations.
func (s Subject) Has(name string) bool {
	return contains(s.Read, name) || contains(s.Write, name)
}

// Operations lists the subject's operations, read group first.
func (s Subject) Operations() []Operation {
	ops := make([]Operation, 0, len(s.Read)+len(s.Write))
	for _, n := range s.Read {
		ops = append(ops, Op(s.Name, n))
	}
	for _, n := range s.Write {
		ops = append(ops, Op(s.Name, n))
	}
	return ops
}

func (s Subject) clone() Subject {
	return Subject{Name: s.Name, Read: append([]string(nil), s.Read...), Write: append([]string(nil), s.Write...)}
}

// The subjects this host decides. terminal, session, chat, file, config and
// trust are ahpd's (D1); agent, approval, control and audit are shellgate's
// own (D2). ahpd's automation, diagnostics, container and proxy subjects are
// left out on purpose: shellgate serves none of them, so they are treated
// like any other unknown subject (file-style operations, see subjectNamed).
var catalogue = []Subject{
	{Name: "terminal", Read: []string{"output"}, Write: []string{"create", "dispose", "input", "resize", "claim", "rename", "clear"}},
	{Name: "agent", Read: []string{"list", "get"}, Write: []string{"create", "delete", "execute"}},
	{Name: "approval", Read: []string{"list"}, Write: []string{"decide"}},
	{Name: "control", Write: []string{"interrupt", "resume"}},
	{Name: "audit", Read: []string{"read"}},
	{Name: "config", Read: []string{"settings"}, Write: []string{"change"}},
	{Name: "trust", Write: []string{"push"}},
	{Name: "session", Read: []string{"list", "state"}, Write: []string{"create", "dispose", "rename", "configure", "folders", "attach", "mark", "review", "changes", "worktree", "artifacts"}},
	{Name: "chat", Read: []string{"turns"}, Write: []string{"create", "fork", "dispose", "move", "send", "cancel", "answer", "tool", "draft", "folders", "mark", "truncate"}},
	{Name: "file", Read: []string{"get", "list", "resolve", "watch"}, Write: []string{"put", "delete", "mkdir", "move", "copy", "request"}},
}

// fileSubject is the template every unknown subject borrows its groups from.
const fileSubject = "file"

var bySubject = func() map[string]Subject {
	m := make(map[string]Subject, len(catalogue))
	for _, s := range catalogue {
		m[s.Name] = s
	}
	return m
}()

// Subjects lists the subjects this host decides, in a stable order. The
// slice is a copy; changing it changes nothing here.
func Subjects() []Subject {
	out := make([]Subject, len(catalogue))
	for i, s := range catalogue {
		out[i] = s.clone()
	}
	return out
}

// Operations lists every operation of every subject this host decides.
func Operations() []Operation {
	var ops []Operation
	for _, s := range catalogue {
		ops = append(ops, s.Operations()...)
	}
	return ops
}

// SubjectNamed returns the subject called name and whether this host knows
// it. An unknown (but well-formed) name is its own subject with the file
// subject's operations under its own name, as ahpd does for a provider's
// schemes (D1): `computer:get` is meaningful, `computer:create` is not.
func SubjectNamed(name string) (Subject, bool) {
	if s, ok := bySubject[name]; ok {
		return s.clone(), true
	}
	f := bySubject[fileSubject]
	return Subject{Name: name, Read: f.Read, Write: f.Write}.clone(), false
}

// subjectNamed is SubjectNamed without the copy, for the hot path.
func subjectNamed(name string) Subject {
	if s, ok := bySubject[name]; ok {
		return s
	}
	f := bySubject[fileSubject]
	return Subject{Name: name, Read: f.Read, Write: f.Write}
}

// Operation is one thing a principal may be allowed to do, written
// `<subject>:<name>`.
type Operation string

// Op builds the operation name on subject.
func Op(subject, name string) Operation { return Operation(subject + ":" + name) }

// The operations shellgate's own code asks about.
const (
	TerminalOutput  Operation = "terminal:output"
	TerminalCreate  Operation = "terminal:create"
	TerminalDispose Operation = "terminal:dispose"
	TerminalInput   Operation = "terminal:input"
	TerminalResize  Operation = "terminal:resize"
	TerminalClaim   Operation = "terminal:claim"
	TerminalRename  Operation = "terminal:rename"
	TerminalClear   Operation = "terminal:clear"

	AgentList    Operation = "agent:list"
	AgentGet     Operation = "agent:get"
	AgentCreate  Operation = "agent:create"
	AgentDelete  Operation = "agent:delete"
	AgentExecute Operation = "agent:execute"

	ApprovalList   Operation = "approval:list"
	ApprovalDecide Operation = "approval:decide"

	ControlInterrupt Operation = "control:interrupt"
	ControlResume    Operation = "control:resume"

	AuditRead Operation = "audit:read"

	ConfigSettings Operation = "config:settings"
	ConfigChange   Operation = "config:change"

	TrustPush Operation = "trust:push"
)

// Subject is the part before the colon.
func (o Operation) Subject() string {
	s, _, _ := strings.Cut(string(o), ":")
	return s
}

// Name is the part after the colon.
func (o Operation) Name() string {
	_, n, _ := strings.Cut(string(o), ":")
	return n
}

// String is the operation as written in grants and refusals.
func (o Operation) String() string { return string(o) }

// Valid reports whether the operation names a real operation of its subject
// (a known one, or a file-style one of an unknown subject). Nothing is
// allowed an invalid operation, so a typo in a caller fails closed.
func (o Operation) Valid() bool {
	subj, name, ok := strings.Cut(string(o), ":")
	// "read" is not rejected outright: audit's read group holds an
	// operation of that name. Has decides, per subject.
	if !ok || !validSubjectName(subj) || name == Wildcard {
		return false
	}
	return subjectNamed(subj).Has(name)
}

// validSubjectName accepts the shape of a URI scheme in lower case, because
// unknown subjects are the schemes providers serve. The group names are
// refused as subjects: `read:computer` is a generation-1 grant, and reading
// it as subject "read" would silently grant nothing.
func validSubjectName(s string) bool {
	if s == "" || len(s) > maxNameLen || s == GroupRead || s == GroupWrite {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// maxNameLen bounds subject names; real schemes are far shorter.
const maxNameLen = 64

func isGroupOrWildcard(s string) bool {
	return s == GroupRead || s == GroupWrite || s == Wildcard
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// knownOperationName reports whether some subject (known, or the file-style
// template every unknown subject uses) has an operation called name; it is
// what makes `*:<name>` meaningful.
func knownOperationName(name string) bool {
	for _, s := range catalogue {
		if s.Has(name) {
			return true
		}
	}
	return false
}
