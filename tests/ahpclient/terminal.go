package ahpclient

import "fmt"

// Terminal rebuilds a terminal channel's state the way a client would: start
// from a snapshot, then apply that channel's envelopes with serverSeq above
// the last one applied, using the protocol's reducers.
type Terminal struct {
	Channel string
	// LastSeq is the serverSeq the state reflects (the snapshot's fromSeq at first).
	LastSeq uint64
	// Stale lists envelopes for the channel that arrived with serverSeq <= LastSeq;
	// they were not applied. A correct server sends none, so tests can require it empty.
	Stale []Envelope

	state TerminalState
	tail  []byte // data appended to the last part but not yet folded into it
}

// NewTerminal starts a reconstruction from a terminal snapshot.
func NewTerminal(s Snapshot) (*Terminal, error) {
	st, err := s.Terminal()
	if err != nil {
		return nil, fmt.Errorf("ahpclient: terminal snapshot of %s: %w", s.Resource, err)
	}
	st.Content = append([]ContentPart{}, st.Content...)
	return &Terminal{Channel: s.Resource, state: st, LastSeq: s.FromSeq}, nil
}

// TerminalText rebuilds the text of the snapshot's terminal after applying envs.
func TerminalText(s Snapshot, envs []Envelope) (string, error) {
	t, err := NewTerminal(s)
	if err != nil {
		return "", err
	}
	t.Apply(envs...)
	return t.Text(), nil
}

// Text is the reconstructed content as one string.
func (t *Terminal) Text() string {
	t.flush()
	return t.state.Text()
}

// State is the reconstructed terminal state. Raw is the snapshot's state, and a
// content part's Raw is nil once Apply has changed that part.
func (t *Terminal) State() TerminalState {
	t.flush()
	st := t.state
	st.Content = append([]ContentPart{}, st.Content...)
	return st
}

// flush folds pending output into the last content part; appending chunk by
// chunk to a string would make long outputs quadratic.
func (t *Terminal) flush() {
	if len(t.tail) == 0 {
		return
	}
	last := &t.state.Content[len(t.state.Content)-1]
	if last.Type == "command" {
		last.Output += string(t.tail)
	} else {
		last.Value += string(t.tail)
	}
	last.Raw = nil
	t.tail = t.tail[:0]
}

// Apply applies envs in order. Envelopes for other channels and rejection
// echoes are ignored; envelopes at or below LastSeq are recorded in Stale.
func (t *Terminal) Apply(envs ...Envelope) {
	for _, e := range envs {
		if e.Channel != t.Channel || e.Rejected() {
			continue
		}
		if e.ServerSeq <= t.LastSeq {
			t.Stale = append(t.Stale, e)
			continue
		}
		t.LastSeq = e.ServerSeq
		t.reduce(e)
	}
}

func (t *Terminal) reduce(e Envelope) {
	v := e.View()
	if v.Type == "terminal/data" {
		if v.Data != nil {
			t.appendData(*v.Data)
		}
		return
	}
	t.flush()
	st := &t.state
	switch v.Type {
	case "terminal/cleared":
		st.Content = []ContentPart{}
	case "terminal/resized":
		st.Cols, st.Rows = v.Cols, v.Rows
	case "terminal/titleChanged":
		if v.Title != nil {
			st.Title = *v.Title
		}
	case "terminal/cwdChanged":
		st.Cwd = v.Cwd
	case "terminal/claimed":
		st.Claim = v.Claim
	case "terminal/exited":
		st.Lifecycle = &Lifecycle{Status: "exited", ExitCode: v.ExitCode}
		st.ExitCode = v.ExitCode
	case "terminal/commandDetectionAvailable":
		st.SupportsCommandDetection = ptr(true)
	case "terminal/commandExecuted":
		p := ContentPart{Type: "command"}
		if v.CommandID != nil {
			p.CommandID = *v.CommandID
		}
		if v.CommandLine != nil {
			p.CommandLine = *v.CommandLine
		}
		if v.Timestamp != nil {
			p.Timestamp = *v.Timestamp
		}
		st.Content = append(st.Content, p)
		st.SupportsCommandDetection = ptr(true)
	case "terminal/commandFinished":
		for i := range st.Content {
			p := &st.Content[i]
			if p.Type == "command" && v.CommandID != nil && p.CommandID == *v.CommandID {
				p.IsComplete = true
				p.ExitCode = v.ExitCode
				p.DurationMs = v.DurationMs
				p.Raw = nil
				break
			}
		}
	}
}

// appendData is the protocol's terminal/data rule: extend a running command's
// output, else the trailing unclassified part, else start a new unclassified part.
func (t *Terminal) appendData(data string) {
	parts := t.state.Content
	if n := len(parts); n > 0 {
		last := parts[n-1]
		if (last.Type == "command" && !last.IsComplete) || last.Type == "unclassified" {
			t.tail = append(t.tail, data...)
			return
		}
	}
	t.state.Content = append(parts, ContentPart{Type: "unclassified", Value: data})
}

// String summarises the reconstruction for failure messages.
func (t *Terminal) String() string {
	return fmt.Sprintf("%s at #%d, %d parts, %d stale", t.Channel, t.LastSeq, len(t.state.Content), len(t.Stale))
}

func ptr[T any](v T) *T { return &v }
