package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/shellgate/shellgate/cmd/shellgate/internal/client"
)

// Piped input goes in chunks of feedChunk bytes, at most feedWindow of them
// unanswered: the daemon answers a chunk once the command has it, so exec
// reads its input no faster than the command does, and a long way to the
// daemon still keeps the command's input buffer full. A chunk's message
// (base64, so 4/3 of it) stays under 32 KiB, the inbound limit WebSocket
// libraries commonly default to.
const (
	feedChunk  = 16 << 10
	feedWindow = 8
)

// inFlight is a chunk sent and not yet answered: it is kept until it is,
// to be sent again over the next connection if this one ends first.
type inFlight struct {
	offset int64
	b      []byte
	end    bool
	sent   *client.Feeding
}

// errCannotFeed: the daemon does not serve piped input (it is older than
// this client).
var errCannotFeed = errors.New("this daemon cannot take piped input (it is older than this shellgate), so standard input is not forwarded")

// feedInput sends everything read from in to the terminal at uri, as bytes,
// then ends its input. It starts on first and carries on over each
// connection conns brings after a resume, sending again what the ended
// one left unanswered (the daemon skips what it already took). It returns
// nil once the input has ended, or once the command has exited (what it
// did not read is dropped, as a pipe to a program that has ended drops
// it); it returns once ctx ends, though a read of in that waits goes on
// until in has something (a read of a pipe cannot be called off).
func feedInput(ctx context.Context, in io.Reader, uri string, first *client.Client, conns <-chan *client.Client) error {
	chunks := readChunks(ctx, in)
	cur := first
	var waiting []*inFlight
	var offset int64
	eof := false
	send := func(f *inFlight) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Not on ctx: the WebSocket library closes a connection whose
		// write is called off, and exec still disposes of its terminal
		// over it once the feeder has stopped. A send that waits on a
		// full socket ends when exec closes the connection.
		var err error
		f.sent, err = cur.Feed(context.WithoutCancel(ctx), uri, f.offset, f.b, f.end)
		return err
	}
	// resume waits for the next connection and sends again what waits.
	resume := func() error {
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case cur = <-conns:
			}
			resent := true
			for _, f := range waiting {
				if err := send(f); ctx.Err() != nil {
					return ctx.Err()
				} else if err != nil {
					resent = false // that one ended too: wait for the next
					break
				}
			}
			if resent {
				return nil
			}
		}
	}
	for {
		if !eof && len(waiting) < feedWindow {
			var c chunk
			select {
			case <-ctx.Done():
				return ctx.Err()
			case c = <-chunks:
			}
			if c.err != nil && c.err != io.EOF {
				return fmt.Errorf("reading standard input: %w", c.err)
			}
			eof = c.err == io.EOF
			f := &inFlight{offset: offset, b: c.b, end: eof}
			offset += int64(len(c.b))
			waiting = append(waiting, f)
			if err := send(f); ctx.Err() != nil {
				return ctx.Err()
			} else if err != nil {
				if err := resume(); err != nil {
					return err
				}
			}
			continue
		}
		if len(waiting) == 0 {
			return nil
		}
		_, err := waiting[0].sent.Wait(ctx)
		var rpc *client.RPCError
		switch {
		case err == nil:
			waiting[0] = nil
			waiting = waiting[1:]
		case client.FeedRefusedForExit(err):
			return nil
		case errors.As(err, &rpc) && rpc.Code == -32601:
			return errCannotFeed
		case errors.As(err, &rpc):
			return fmt.Errorf("standard input: %w", err)
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			// The connection ended: exec resumes on a new one.
			if err := resume(); err != nil {
				return err
			}
		}
	}
}

// chunk is one read of standard input; err is io.EOF with the last one.
type chunk struct {
	b   []byte
	err error
}

// readChunks reads in on a goroutine of its own, so that the feeder can
// stop at ctx's end while a read waits. It ends after the read that ends
// the input (or fails), or at the first chunk ctx's end leaves untaken.
func readChunks(ctx context.Context, in io.Reader) <-chan chunk {
	out := make(chan chunk)
	go func() {
		for {
			buf := make([]byte, feedChunk)
			n, err := in.Read(buf)
			if n == 0 && err == nil {
				continue
			}
			select {
			case out <- chunk{b: buf[:n], err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return out
}
