package terminals

import (
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/shellgate/shellgate/domain/shellmarks"
)

// shellNonceEnv carries a terminal's nonce to the integration script, which
// signs the command lines it reports with it: any program can print marks,
// only the shell's own script knows the nonce.
const shellNonceEnv = "SHELLGATE_NONCE"

// markReader strips shell-integration marks from a pty terminal's output
// and turns them into command-detection actions. The reader belongs to the
// pump goroutine; the tracker is guarded by the host's lock, since typed
// input reaches it from dispatchers.
type markReader struct {
	reader  shellmarks.Reader
	tracker *shellmarks.Tracker
	out     []byte
	found   []shellmarks.Mark
}

func newMarkReader(cwd, nonce string) *markReader {
	return &markReader{tracker: shellmarks.NewTracker(cwd, nonce)}
}

// fed is one read's cleaned output and the marks found in it; both alias
// the reader's buffers until the next feed.
type fed struct {
	out   []byte
	marks []shellmarks.Mark
}

func (m *markReader) feed(p []byte) fed {
	m.out, m.found = m.reader.Feed(p, m.out[:0], m.found[:0])
	return fed{out: m.out, marks: m.found}
}

// flush returns what the reader held back when the stream ended.
func (m *markReader) flush() []byte { return m.reader.Flush(nil) }

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// bufferPool lends read buffers to pumps while output is there.
type bufferPool struct {
	size int
	pool sync.Pool
}

func (b *bufferPool) get() []byte {
	if p, ok := b.pool.Get().(*[]byte); ok {
		return *p
	}
	return make([]byte, b.size)
}

func (b *bufferPool) put(buf []byte) { b.pool.Put(&buf) }
