package ahp

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
)

// DedupeWindow is how many recently applied dispatches a client id's
// window remembers (D18 in docs/protocol.md). A retry comes right after a
// reconnect, for the few actions the client had not seen settled, so a few
// hundred reach far enough back while costing about 6 KiB per client id.
const DedupeWindow = 256

// fingerprint names one dispatch's action and channel; two dispatches with
// the same fingerprint asked for the same thing.
type fingerprint [16]byte

// fingerprintOf hashes the channel and the action as sent, with the
// insignificant white space taken out: a client retries an action by
// sending it again, and its own encoder spells it the same way twice.
func fingerprintOf(channel string, raw json.RawMessage) fingerprint {
	h := sha256.New()
	h.Write([]byte(channel))
	h.Write([]byte{0})
	// Compact only drops whitespace between tokens: an action with no
	// whitespace byte at all (as clients send them) is compact already.
	var compact bytes.Buffer
	if bytes.ContainsAny(raw, " \t\n\r") && json.Compact(&compact, raw) == nil {
		h.Write(compact.Bytes())
	} else {
		h.Write(raw)
	}
	var sum [sha256.Size]byte
	var f fingerprint
	copy(f[:], h.Sum(sum[:0]))
	return f
}

// seqWindow remembers, for one client id, its recently applied
// (clientSeq, action) pairs, so that a retried dispatch is not applied
// twice and yet nothing a client sends is dropped unanswered:
//
//   - a clientSeq the window holds with the same action is a repeat: it is
//     suppressed, and echoed as applied so the client can settle it;
//   - any other dispatch is applied: above the high-water mark it is the
//     next one; at or below it, with an action the window does not hold
//     under that number, the client restarted its counter (the official
//     clients start at 1 for every new client object, including one made to
//     reconnect), and it becomes the new high-water mark.
//
// The window is bounded by DedupeWindow entries, oldest dropped first; a
// retry of a dispatch older than that is applied again.
type seqWindow struct {
	high    int64
	entries []seqEntry // oldest first
}

type seqEntry struct {
	seq int64
	sum fingerprint
}

// repeats reports whether seq with this action was already applied.
func (w *seqWindow) repeats(seq int64, sum fingerprint) bool {
	for i := len(w.entries) - 1; i >= 0; i-- {
		if e := w.entries[i]; e.seq == seq {
			return e.sum == sum
		}
	}
	return false
}

// applied records an applied dispatch. At or below the high-water mark it
// starts a new counter: the entries from seq up were the old counter's and
// cannot be retried any more, so they go.
func (w *seqWindow) applied(seq int64, sum fingerprint) {
	if seq <= w.high {
		keep := w.entries[:0]
		for _, e := range w.entries {
			if e.seq < seq {
				keep = append(keep, e)
			}
		}
		clear(w.entries[len(keep):])
		w.entries = keep
	}
	if len(w.entries) == DedupeWindow {
		copy(w.entries, w.entries[1:])
		w.entries = w.entries[:DedupeWindow-1]
	}
	w.entries = append(w.entries, seqEntry{seq, sum})
	w.high = seq
}

// reset forgets everything: initialize starts a client id afresh.
func (w *seqWindow) reset() {
	w.high = 0
	w.entries = nil
}
