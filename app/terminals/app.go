package terminals

import (
	"github.com/shellgate/shellgate/app/gate"
	"github.com/shellgate/shellgate/app/hub"
)

// App lists every capability the terminal host offers the outside, one use
// case each; each checks its caller's grants first, by operation (see
// access.go for which needs what). An inbound adapter (the protocol
// server, the MCP tools) reaches terminals through these and nothing
// else; the Host underneath is what the use cases, and the agent gate in
// app/agents, stand on.
type App struct {
	// OpenTerminal starts a terminal (terminal:create).
	OpenTerminal OpenTerminal
	// DisposeTerminal ends a terminal and removes it (terminal:dispose).
	DisposeTerminal DisposeTerminal
	// DispatchAction applies a client's action: input, resize, claim,
	// rename, clear, or a connection's own setting on the root.
	DispatchAction DispatchAction
	// Subscribe has a viewer receive channels, from a snapshot on
	// (terminal:output; the root list is everyone's).
	Subscribe Subscribe
	// Unsubscribe stops a viewer receiving a channel.
	Unsubscribe Unsubscribe
	// Resume subscribes a returning viewer again, replaying what it missed.
	Resume Resume
	// FeedInput writes bytes to a terminal's input as they are, and ends
	// it (terminal:input).
	FeedInput FeedInput
	// ListTerminals lists every terminal (a sign-in, no grant).
	ListTerminals ListTerminals
	// ReadTerminal returns a terminal's state (terminal:output).
	ReadTerminal ReadTerminal

	c *appCore
}

// appCore is what every use case shares.
type appCore struct {
	host *Host
	gate *gate.Gate
}

// NewApp returns the use cases over host, deciding every request with g.
// A nil gate lets nobody in: an embedder who wants no access control says
// so with gate.AllowAll(), where a review sees it.
func NewApp(host *Host, g *gate.Gate) *App {
	if g == nil {
		g = gate.Nobody()
	}
	c := &appCore{host: host, gate: g}
	return &App{
		OpenTerminal:    OpenTerminal{c},
		DisposeTerminal: DisposeTerminal{c},
		DispatchAction:  DispatchAction{c},
		Subscribe:       Subscribe{c},
		Unsubscribe:     Unsubscribe{c},
		Resume:          Resume{c},
		FeedInput:       FeedInput{c},
		ListTerminals:   ListTerminals{c},
		ReadTerminal:    ReadTerminal{c},
		c:               c,
	}
}

// Caller is who asks, as the inbound adapter signed them in; the gate
// looks their grants up afresh on every request.
type Caller = gate.Caller

// Viewer is one consumer of channels (one connection): the bounded queue
// the host's fan-out fills and the consumer drains. The use cases
// subscribe it; its consumer takes, writes and settles what it holds.
type Viewer = hub.Subscriber

// Event is one envelope on its way to a viewer.
type Event = hub.Event

// Origin names the client dispatch an envelope answers.
type Origin = hub.Origin

// SlowError ends a viewer that fell too far behind.
type SlowError = hub.SlowError

// DefaultQueueBytes bounds a viewer's queue when NewViewer is given none.
const DefaultQueueBytes = hub.DefaultQueueBytes

// NewViewer returns a viewer whose queue holds at most limit bytes (0
// means DefaultQueueBytes), counted toward the host's flow control and
// total from its first queued byte. It receives nothing until a use case
// subscribes it.
func (a *App) NewViewer(limit int) *Viewer { return a.c.host.hub.NewSubscriber("", limit) }

// Introduce names the client a viewer delivers to: the echo of that
// client's typed input, and its refusals, reach it alone.
func (a *App) Introduce(v *Viewer, clientID string) { a.c.host.hub.SetClientID(v, clientID) }

// Leave takes a viewer off every channel and ends it.
func (a *App) Leave(v *Viewer) { a.c.host.hub.Remove(v) }

// Gate is the gate the use cases ask.
func (a *App) Gate() *gate.Gate { return a.c.gate }

// DefaultDirectory is the host's own directory as a file: URI, where a
// terminal that names none starts.
func (a *App) DefaultDirectory() string { return a.c.host.DefaultDirectory() }

// Stats are the host's counts, for the daemon's own metrics: they tell no
// caller anything, so no grant is asked.
type Stats struct {
	// Terminals is how many terminals are listed now (running or exited).
	Terminals int
	// Held is how many bytes every viewer together holds now.
	Held int64
	// Pauses is how many times a terminal's output had to wait for its
	// viewers.
	Pauses int64
}

// Stats returns the counts now.
func (a *App) Stats() Stats {
	h := a.c.host
	return Stats{Terminals: len(h.List()), Held: h.hub.Held(), Pauses: h.hub.Pauses()}
}
