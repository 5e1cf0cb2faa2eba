// Package terminal is a terminal's state and the reducer that every terminal
// action goes through. It is pure: no I/O, no goroutines, no clock.
package terminal

// Default window size.
const (
	DefaultCols = 80
	DefaultRows = 24
)

// LifecycleStatus is "running" or "exited" (an open enum on the wire).
type LifecycleStatus string

// Lifecycle statuses.
const (
	StatusRunning LifecycleStatus = "running"
	StatusExited  LifecycleStatus = "exited"
)

// Lifecycle is whether the process is still there, and its code once gone.
type Lifecycle struct {
	Status LifecycleStatus
	// ExitCode is nil while running, or when the exit carried no code.
	ExitCode *int
}

// IsExited reports whether the process has ended.
func (l Lifecycle) IsExited() bool { return l.Status == StatusExited }

// Options are the facts a terminal starts with.
type Options struct {
	Title      string
	CWD        string // a file: URI, or empty when unknown
	Cols, Rows int    // 0 means the default
	Claim      Claim
	IsPty      bool
	// ScrollbackLimit bounds the scrollback in characters; 0 means
	// DefaultScrollbackLimit.
	ScrollbackLimit int
}

// State is one terminal's state. The zero value is not usable; use New.
// It is not safe for concurrent use: its owner serialises every Apply.
type State struct {
	Title                    string
	CWD                      string
	Cols, Rows               int
	Claim                    Claim
	Lifecycle                Lifecycle
	IsPty                    bool
	SupportsCommandDetection bool

	scroll Scrollback
}

// New returns a running terminal's state.
func New(o Options) *State {
	s := &State{
		Title:     o.Title,
		CWD:       o.CWD,
		Cols:      o.Cols,
		Rows:      o.Rows,
		Claim:     o.Claim,
		IsPty:     o.IsPty,
		Lifecycle: Lifecycle{Status: StatusRunning},
	}
	if s.Cols <= 0 {
		s.Cols = DefaultCols
	}
	if s.Rows <= 0 {
		s.Rows = DefaultRows
	}
	s.scroll.Limit = o.ScrollbackLimit
	return s
}

// Apply reduces one action into the state. It is deterministic and does
// nothing but change s; side effects (writing to the process) are the
// caller's. It reports whether the state changed.
func (s *State) Apply(a Action) bool {
	switch a := a.(type) {
	case Data:
		if a.Data == "" {
			return false
		}
		s.scroll.Append(a.Data)
	case Input:
		return false
	case Resized:
		if s.Cols == a.Cols && s.Rows == a.Rows {
			return false
		}
		s.Cols, s.Rows = a.Cols, a.Rows
	case Claimed:
		if s.Claim == a.Claim {
			return false
		}
		s.Claim = a.Claim
	case TitleChanged:
		if s.Title == a.Title {
			return false
		}
		s.Title = a.Title
	case CwdChanged:
		if s.CWD == a.CWD {
			return false
		}
		s.CWD = a.CWD
	case Exited:
		s.Lifecycle = Lifecycle{Status: StatusExited, ExitCode: copyInt(a.ExitCode)}
	case Cleared:
		s.scroll.Clear()
	case CommandDetectionAvailable:
		if s.SupportsCommandDetection {
			return false
		}
		s.SupportsCommandDetection = true
	case CommandExecuted:
		s.SupportsCommandDetection = true
		s.scroll.StartCommand(CommandInfo{ID: a.CommandID, Line: a.CommandLine, Timestamp: a.Timestamp})
	case CommandFinished:
		return s.scroll.FinishCommand(a.CommandID, a.ExitCode, a.DurationMs)
	default:
		return false
	}
	return true
}

// Content returns the content parts, oldest first.
func (s *State) Content() []Part { return s.scroll.Parts() }

// ScrollbackChars is how many characters the scrollback holds.
func (s *State) ScrollbackChars() int { return s.scroll.Chars() }

// Snapshot is a copy of the state that shares nothing with it.
type Snapshot struct {
	Title                    string
	CWD                      string
	Cols, Rows               int
	Content                  []Part
	Claim                    Claim
	Lifecycle                Lifecycle
	IsPty                    bool
	SupportsCommandDetection bool
}

// Snapshot copies the state.
func (s *State) Snapshot() Snapshot {
	return Snapshot{
		Title:                    s.Title,
		CWD:                      s.CWD,
		Cols:                     s.Cols,
		Rows:                     s.Rows,
		Content:                  s.scroll.Parts(),
		Claim:                    s.Claim,
		Lifecycle:                Lifecycle{Status: s.Lifecycle.Status, ExitCode: copyInt(s.Lifecycle.ExitCode)},
		IsPty:                    s.IsPty,
		SupportsCommandDetection: s.SupportsCommandDetection,
	}
}

func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyInt64(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
