package terminal

// Action is one change to a terminal, named as on the wire (the
// protocol's terminal actions; shellgate's choices are in docs/protocol.md).
type Action interface {
	// Type is the protocol's action type, e.g. "terminal/data".
	Type() string
}

// Action types, as the protocol spells them.
const (
	TypeData                      = "terminal/data"
	TypeInput                     = "terminal/input"
	TypeResized                   = "terminal/resized"
	TypeClaimed                   = "terminal/claimed"
	TypeTitleChanged              = "terminal/titleChanged"
	TypeCwdChanged                = "terminal/cwdChanged"
	TypeExited                    = "terminal/exited"
	TypeCleared                   = "terminal/cleared"
	TypeCommandDetectionAvailable = "terminal/commandDetectionAvailable"
	TypeCommandExecuted           = "terminal/commandExecuted"
	TypeCommandFinished           = "terminal/commandFinished"
)

// Data is output from the process.
type Data struct{ Data string }

// Input is bytes a client typed; it changes no state.
type Input struct{ Data string }

// Resized sets the window size.
type Resized struct{ Cols, Rows int }

// Claimed moves the claim.
type Claimed struct{ Claim Claim }

// TitleChanged renames the terminal.
type TitleChanged struct{ Title string }

// CwdChanged reports the shell's new directory as a file: URI.
type CwdChanged struct{ CWD string }

// Exited reports the end of the process; ExitCode is nil when unknown.
type Exited struct{ ExitCode *int }

// Cleared drops the scrollback.
type Cleared struct{}

// CommandDetectionAvailable says the shell reports command boundaries.
type CommandDetectionAvailable struct{}

// CommandExecuted starts a command part; Timestamp is Unix milliseconds.
type CommandExecuted struct {
	CommandID, CommandLine string
	Timestamp              int64
}

// CommandFinished completes the command part with that id, if there is one.
type CommandFinished struct {
	CommandID  string
	ExitCode   *int
	DurationMs *int64
}

func (Data) Type() string                      { return TypeData }
func (Input) Type() string                     { return TypeInput }
func (Resized) Type() string                   { return TypeResized }
func (Claimed) Type() string                   { return TypeClaimed }
func (TitleChanged) Type() string              { return TypeTitleChanged }
func (CwdChanged) Type() string                { return TypeCwdChanged }
func (Exited) Type() string                    { return TypeExited }
func (Cleared) Type() string                   { return TypeCleared }
func (CommandDetectionAvailable) Type() string { return TypeCommandDetectionAvailable }
func (CommandExecuted) Type() string           { return TypeCommandExecuted }
func (CommandFinished) Type() string           { return TypeCommandFinished }

// HostOnly reports whether t is a terminal action type only the host may send.
func HostOnly(t string) bool {
	switch t {
	case TypeData, TypeCwdChanged, TypeExited, TypeCommandDetectionAvailable,
		TypeCommandExecuted, TypeCommandFinished:
		return true
	}
	return false
}
