package memory

import (
	"context"
	"sync"

	"github.com/shellgate/shellgate/ports"
)

// Listener is an in-process ports.Listener: Dial on the client side, Accept
// on the server side. There is no backlog: Dial waits until an Accept takes
// the connection, so a dialled connection always has an owner.
type Listener struct {
	size  int
	conns chan ports.Conn

	once sync.Once
	done chan struct{}
}

var _ ports.Listener = (*Listener)(nil)

// NewListener returns a Listener whose connections hold DefaultBuffer
// messages each way.
func NewListener() *Listener { return NewListenerBuffer(DefaultBuffer) }

// NewListenerBuffer returns a Listener whose connections hold size messages
// each way (see PipeBuffer).
func NewListenerBuffer(size int) *Listener {
	return &Listener{
		size:  size,
		conns: make(chan ports.Conn),
		done:  make(chan struct{}),
	}
}

// Dial connects as peer and returns the client end once Accept has taken the
// server end. It fails with ports.ErrListenerClosed after Close, or with
// ctx's error.
func (l *Listener) Dial(ctx context.Context, peer ports.Peer) (ports.Conn, error) {
	select {
	case <-l.done:
		return nil, ports.ErrListenerClosed
	default:
	}
	server, client := PipeBuffer(peer, l.size)
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, ports.ErrListenerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accept returns the server end of the next dialled connection, or
// ports.ErrListenerClosed once Close was called, or ctx's error.
func (l *Listener) Accept(ctx context.Context) (ports.Conn, error) {
	select {
	case <-l.done:
		return nil, ports.ErrListenerClosed
	default:
	}
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, ports.ErrListenerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops accepting: pending and later Accepts and Dials fail.
// Connections already made are left to their owners.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}
