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

// ErrInputEnded refuses input after its end was sent (the pipe to the
// process is closed).
var ErrInputEnded = errors.New("the input of this terminal has ended")

// GapError refuses fed bytes that start past the end of what was fed
// before: bytes in between are missing.
type GapError struct {
	// Want is the offset the next fed bytes must start at (or before).
	Want int64
}

func (e *GapError) Error() string {
	return fmt.Sprintf("fed input must go on from offset %d, the count of bytes taken so far", e.Want)
}

// Taken is told once input handed to Feed or EndInput has reached the
// process (written into its pipe or pseudoterminal), with nil, or with why
// it never will. It is called once, never with a lock of the terminal's
// held, and may be called before Feed returns.
type Taken func(error)

// Fed is told what Taken is, and the length of the fed stream with the
// bytes it answers: the offset the next feed goes on from.
type Fed func(length int64, err error)

// at is fed told of the stream's length.
func (f Fed) at(length int64) Taken { return func(err error) { f(length, err) } }

// pendingInput is input waiting for its process, and who to tell once it
// is written.
type pendingInput struct {
	b     []byte
	taken Taken
}

// inputQueue lets a terminal take input without ever waiting on its
// process: what the process's input buffer takes now is written at once,
// from the caller (a key costs no hand-off); the rest waits here, in order,
// for a goroutine that writes it as the process reads. Input that comes
// while some waits joins the queue behind it.
type inputQueue struct {
	mu       sync.Mutex
	pending  []pendingInput
	size     int           // bytes in pending
	inFlight int           // bytes the writer is writing now
	writing  bool          // a writer goroutine owns the pending input
	done     chan struct{} // closed when the last writer ended; nil if none ran

	fed      int64 // bytes taken by feed, the offset the next feed goes on from
	lastFed  byte  // the last byte fed, to end a pty's input on a line of its own
	ended    bool  // the end of input was asked for
	endTaken Taken // on pipes: told once the queue has drained and the pipe is closed
	closeEnd bool  // on pipes: the writer closes the input once the queue has drained
}

// write sends b to p, or queues what p does not take now. It returns the
// errors of the immediate write (the caller decides which mean the process
// has gone) and ErrInputBacklog when too much already waits.
func (q *inputQueue) write(p ports.Process, b []byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closeEnd {
		return ErrInputEnded
	}
	_, err := q.writeLocked(p, b, nil)
	return err
}

// writeLocked is write with q.mu held; taken, if not nil, is returned when
// b was written at once (the caller calls it once q.mu is released), else
// queued with b.
func (q *inputQueue) writeLocked(p ports.Process, b []byte, taken Taken) (Taken, error) {
	if q.writing {
		if waiting := q.size + q.inFlight; waiting > MaxPendingInput {
			return nil, fmt.Errorf("%w: %d bytes are waiting; nothing of this input was taken, send it again once the process reads", ErrInputBacklog, waiting)
		}
		q.push(b, taken)
		return nil, nil
	}
	if tw, ok := p.(ports.InputTrier); ok {
		n, err := tw.TryWrite(b)
		if err != nil {
			return nil, err
		}
		if b = b[n:]; len(b) == 0 {
			return taken, nil
		}
	}
	q.push(b, taken)
	q.writing = true
	q.done = make(chan struct{})
	go q.drain(p, q.done)
	return nil, nil
}

// push queues a copy of b: the caller's bytes are its own once write
// returns.
func (q *inputQueue) push(b []byte, taken Taken) {
	b = append([]byte(nil), b...)
	q.pending = append(q.pending, pendingInput{b: b, taken: taken})
	q.size += len(b)
}

// feed writes the bytes of a stream of input that starts at offset (the
// count of bytes fed before it, or -1 to go on from wherever the stream
// is): the part already taken is skipped, so a sender that lost its
// answers may send again from the last offset it knows was taken. taken is
// told once the bytes reached the process. eof is the pty's end-of-input
// character (nil on pipes), used by end.
func (q *inputQueue) feed(p ports.Process, offset int64, b []byte, fed Fed) error {
	q.mu.Lock()
	if offset < 0 {
		offset = q.fed
	}
	switch {
	case offset > q.fed:
		q.mu.Unlock()
		return &GapError{Want: q.fed}
	case offset+int64(len(b)) <= q.fed:
		// All of it was taken before: a retry.
		length := q.fed
		q.mu.Unlock()
		fed(length, nil)
		return nil
	case q.ended:
		q.mu.Unlock()
		return ErrInputEnded
	}
	b = b[q.fed-offset:]
	now, err := q.writeLocked(p, b, fed.at(q.fed+int64(len(b))))
	if err == nil {
		q.fed += int64(len(b))
		q.lastFed = b[len(b)-1]
	}
	q.mu.Unlock()
	if now != nil {
		now(nil)
	}
	return err
}

// end ends the fed stream at offset (-1: wherever it is), once everything
// before it has reached the process. On pipes the process's input is then
// closed, and input sent afterwards is refused; on a pty the end of input
// is the character eof (^D), typed on a line of its own, and the terminal
// still takes typed keys afterwards. A second end changes nothing.
func (q *inputQueue) end(p ports.Process, offset int64, eof []byte, fed Fed) error {
	q.mu.Lock()
	if offset < 0 {
		offset = q.fed
	}
	switch {
	case offset != q.fed:
		q.mu.Unlock()
		return &GapError{Want: q.fed}
	case q.ended:
		q.mu.Unlock()
		fed(offset, nil)
		return nil
	}
	q.ended = true
	taken := fed.at(offset)
	if eof != nil {
		if q.fed > 0 && q.lastFed != '\n' {
			// The first ^D only hands the unfinished line over.
			eof = append(append([]byte(nil), eof...), eof...)
		}
		now, err := q.writeLocked(p, eof, taken)
		q.mu.Unlock()
		if now != nil {
			now(nil)
		}
		return err
	}
	q.closeEnd = true
	if q.writing {
		q.endTaken = taken
		q.mu.Unlock()
		return nil
	}
	err := p.CloseInput()
	q.mu.Unlock()
	taken(err)
	return nil
}

// drain writes the queue in order, waiting on the process as long as it
// takes, and ends once the queue is empty or the process's input is gone
// (closed, or the process ended): then what still waits is dropped, as
// input to a process that has gone is, and its senders are told so.
func (q *inputQueue) drain(p ports.Process, done chan struct{}) {
	defer close(done)
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.writing = false
			endTaken := q.endTaken
			q.endTaken = nil
			var err error
			if q.closeEnd && endTaken != nil {
				err = p.CloseInput()
			}
			q.mu.Unlock()
			if endTaken != nil {
				endTaken(err)
			}
			return
		}
		in := q.pending[0]
		q.pending[0] = pendingInput{}
		q.pending = q.pending[1:]
		q.size -= len(in.b)
		q.inFlight = len(in.b)
		q.mu.Unlock()

		_, err := p.Write(in.b)

		q.mu.Lock()
		q.inFlight = 0
		if err != nil {
			dropped := q.dropLocked()
			q.writing = false
			q.mu.Unlock()
			tell(in.taken, err)
			tellAll(dropped, err)
			return
		}
		q.mu.Unlock()
		tell(in.taken, nil)
	}
}

// dropLocked empties the queue and returns whom to tell.
func (q *inputQueue) dropLocked() []Taken {
	var out []Taken
	for _, in := range q.pending {
		if in.taken != nil {
			out = append(out, in.taken)
		}
	}
	if q.endTaken != nil {
		out = append(out, q.endTaken)
		q.endTaken = nil
	}
	q.pending, q.size = nil, 0
	return out
}

func tell(t Taken, err error) {
	if t != nil {
		t(err)
	}
}

func tellAll(ts []Taken, err error) {
	for _, t := range ts {
		t(err)
	}
}

// closeInput ends p's input unless that would wait: a pty's end of input
// is a typed character, which would queue behind input the process is not
// reading (and contend with the waiting write), so with input waiting it is
// left out; a pipe is closed, which also ends the waiting write. q.mu is
// held so that no writer starts meanwhile.
func (q *inputQueue) closeInput(p ports.Process, isPty bool) error {
	q.mu.Lock()
	if isPty && q.writing {
		dropped := q.dropLocked()
		q.mu.Unlock()
		tellAll(dropped, ports.ErrProcessGone)
		return nil
	}
	defer q.mu.Unlock()
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
