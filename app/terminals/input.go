package terminals

import (
	"errors"
	"fmt"
	"sync"

	"github.com/shellgate/shellgate/ports"
)

// MaxPendingInput bounds the typed input a terminal holds for a process
// that is not reading it. Input that arrives while more than this waits is
// refused with ErrInputBacklog.
const MaxPendingInput = 1 << 20

// ErrInputBacklog refuses input to a process that has not taken what it
// was given.
var ErrInputBacklog = errors.New("the process is not reading its input")

// inputQueue lets a terminal take input without ever waiting on its
// process: what the process's input buffer takes now is written at once,
// from the caller (a key costs no hand-off); the rest waits here, in order,
// for a goroutine that writes it as the process reads. Input that comes
// while some waits joins the queue behind it.
type inputQueue struct {
	mu       sync.Mutex
	pending  [][]byte
	size     int           // bytes in pending
	inFlight int           // bytes the writer is writing now
	writing  bool          // a writer goroutine owns the pending input
	done     chan struct{} // closed when the last writer ended; nil if none ran
}

// write sends b to p, or queues what p does not take now. It returns the
// errors of the immediate write (the caller decides which mean the process
// has gone) and ErrInputBacklog when too much already waits.
func (q *inputQueue) write(p ports.Process, b []byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.writing {
		if waiting := q.size + q.inFlight; waiting > MaxPendingInput {
			return fmt.Errorf("%w: %d bytes are waiting; nothing of this input was taken, send it again once the process reads", ErrInputBacklog, waiting)
		}
		q.push(b)
		return nil
	}
	if tw, ok := p.(ports.InputTrier); ok {
		n, err := tw.TryWrite(b)
		if err != nil {
			return err
		}
		if b = b[n:]; len(b) == 0 {
			return nil
		}
	}
	q.push(b)
	q.writing = true
	q.done = make(chan struct{})
	go q.drain(p, q.done)
	return nil
}

// push queues a copy of b: the caller's bytes are its own once write
// returns.
func (q *inputQueue) push(b []byte) {
	b = append([]byte(nil), b...)
	q.pending = append(q.pending, b)
	q.size += len(b)
}

// drain writes the queue in order, waiting on the process as long as it
// takes, and ends once the queue is empty or the process's input is gone
// (closed, or the process ended): then what still waits is dropped, as
// input to a process that has gone is.
func (q *inputQueue) drain(p ports.Process, done chan struct{}) {
	defer close(done)
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.writing = false
			q.mu.Unlock()
			return
		}
		b := q.pending[0]
		q.pending[0] = nil
		q.pending = q.pending[1:]
		q.size -= len(b)
		q.inFlight = len(b)
		q.mu.Unlock()

		_, err := p.Write(b)

		q.mu.Lock()
		q.inFlight = 0
		if err != nil {
			q.pending, q.size, q.writing = nil, 0, false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
	}
}

// closeInput ends p's input unless that would wait: a pty's end of input
// is a typed character, which would queue behind input the process is not
// reading (and contend with the waiting write), so with input waiting it is
// left out; a pipe is closed, which also ends the waiting write. q.mu is
// held so that no writer starts meanwhile.
func (q *inputQueue) closeInput(p ports.Process, isPty bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if isPty && q.writing {
		q.pending, q.size = nil, 0
		return nil
	}
	return p.CloseInput()
}

// wait returns once no writer runs. The process's input must be closed (or
// the process gone) first, or the writer may wait for it forever.
func (q *inputQueue) wait() {
	q.mu.Lock()
	done := q.done
	q.mu.Unlock()
	if done != nil {
		<-done
	}
}
