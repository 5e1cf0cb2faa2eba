package terminal

import "unicode/utf8"

// DefaultScrollbackLimit is how many characters a terminal keeps by default.
const DefaultScrollbackLimit = 200_000

// PartKind tells the two kinds of content part apart.
type PartKind string

// Content part kinds.
const (
	PartUnclassified PartKind = "unclassified"
	PartCommand      PartKind = "command"
)

// CommandInfo describes a command part (everything but its output).
type CommandInfo struct {
	ID         string
	Line       string
	Timestamp  int64 // Unix milliseconds
	Complete   bool
	ExitCode   *int
	DurationMs *int64
}

// Part is one content part: unclassified output, or one command's output.
type Part struct {
	Kind PartKind
	// Text is the unclassified part's value or the command part's output.
	Text string
	// Command is set for command parts only.
	Command *CommandInfo
}

// segment holds one part's text in a buffer that is trimmed from the front
// by moving start, and compacted only when most of it is dead, so appending
// and trimming are amortised O(bytes). The text is indexed in chunks of
// known character counts, so trimming skips whole chunks without counting
// their characters again, and an ASCII chunk is cut without scanning it.
type segment struct {
	cmd    *CommandInfo
	buf    []byte
	start  int
	chars  int
	chunks []chunk // oldest first; the first begins at start
}

// chunk is a run of the buffer ending at end (exclusive) holding chars
// characters.
type chunk struct {
	end   int
	chars int
}

// minChunkBytes is how small the last chunk may be before appends extend it
// rather than start a new one, which bounds the index for byte-at-a-time
// output.
const minChunkBytes = 1024

func (g *segment) text() string { return string(g.buf[g.start:]) }

func (g *segment) append(data string, chars int) {
	g.buf = append(g.buf, data...)
	if n := len(g.chunks); n > 0 {
		last := &g.chunks[n-1]
		begin := g.start
		if n > 1 {
			begin = g.chunks[n-2].end
		}
		if last.end-begin < minChunkBytes {
			last.end, last.chars = len(g.buf), last.chars+chars
			g.chars += chars
			return
		}
	}
	g.chunks = append(g.chunks, chunk{end: len(g.buf), chars: chars})
	g.chars += chars
}

// dropFront removes the first n characters of the segment.
func (g *segment) dropFront(n int) {
	g.chars -= n
	for n > 0 && len(g.chunks) > 0 {
		c := &g.chunks[0]
		if c.chars <= n {
			n -= c.chars
			g.start = c.end
			g.chunks = g.chunks[1:]
			continue
		}
		if c.end-g.start == c.chars { // all ASCII: one byte a character
			g.start += n
		} else {
			for i := 0; i < n; i++ {
				_, size := utf8.DecodeRune(g.buf[g.start:c.end])
				g.start += size
			}
		}
		c.chars -= n
		n = 0
	}
	if g.start > len(g.buf)/2 && g.start >= 4096 {
		g.buf = append(g.buf[:0], g.buf[g.start:]...)
		for i := range g.chunks {
			g.chunks[i].end -= g.start
		}
		g.start = 0
		if cap(g.chunks) > 4*len(g.chunks)+16 {
			g.chunks = append([]chunk(nil), g.chunks...)
		}
	}
}

// Scrollback is a terminal's content, bounded in characters (Unicode code
// points, so a character is never split). The oldest output goes first; what
// remains is always exactly the newest output.
type Scrollback struct {
	// Limit bounds the characters kept; 0 means DefaultScrollbackLimit.
	Limit int
	parts []segment
	chars int
}

func (b *Scrollback) limit() int {
	if b.Limit <= 0 {
		return DefaultScrollbackLimit
	}
	return b.Limit
}

// Chars is how many characters are kept.
func (b *Scrollback) Chars() int { return b.chars }

// Append adds output following the protocol's terminal/data rule: to a
// running command part if that is last, else to a trailing unclassified part,
// else as a new unclassified part.
func (b *Scrollback) Append(data string) {
	n := utf8.RuneCountInString(data)
	if limit := b.limit(); n > limit {
		// Only the newest limit characters can survive; skip copying the rest.
		data = lastRunes(data, limit)
		n = limit
	}
	last := b.lastSegment()
	if last == nil || (last.cmd != nil && last.cmd.Complete) {
		b.parts = append(b.parts, segment{})
		last = &b.parts[len(b.parts)-1]
	}
	last.append(data, n)
	b.chars += n
	b.trim()
}

func (b *Scrollback) lastSegment() *segment {
	if len(b.parts) == 0 {
		return nil
	}
	return &b.parts[len(b.parts)-1]
}

// trim drops the oldest characters until the limit holds. A whole part goes
// when all of it is over the limit, except the last part, which keeps its
// (possibly empty) place so a running command still receives its output.
func (b *Scrollback) trim() {
	excess := b.chars - b.limit()
	for excess > 0 {
		first := &b.parts[0]
		if first.chars <= excess && len(b.parts) > 1 {
			excess -= first.chars
			b.chars -= first.chars
			b.parts[0] = segment{}
			b.parts = b.parts[1:]
			continue
		}
		take := min(excess, first.chars)
		first.dropFront(take)
		b.chars -= take
		excess -= take
	}
}

// StartCommand appends a running command part with empty output.
func (b *Scrollback) StartCommand(info CommandInfo) {
	info.Complete = false
	info.ExitCode, info.DurationMs = nil, nil
	b.parts = append(b.parts, segment{cmd: &info})
}

// FinishCommand completes the newest command part with that id; it reports
// false, changing nothing, when there is none.
func (b *Scrollback) FinishCommand(id string, exitCode *int, durationMs *int64) bool {
	for i := len(b.parts) - 1; i >= 0; i-- {
		if c := b.parts[i].cmd; c != nil && c.ID == id {
			c.Complete = true
			c.ExitCode = copyInt(exitCode)
			c.DurationMs = copyInt64(durationMs)
			return true
		}
	}
	return false
}

// Clear drops everything and releases the buffers.
func (b *Scrollback) Clear() {
	b.parts = nil
	b.chars = 0
}

// Parts copies the content out. An empty scrollback is an empty, non-nil slice.
func (b *Scrollback) Parts() []Part {
	out := make([]Part, 0, len(b.parts))
	for i := range b.parts {
		g := &b.parts[i]
		p := Part{Kind: PartUnclassified, Text: g.text()}
		if g.cmd != nil {
			c := *g.cmd
			c.ExitCode, c.DurationMs = copyInt(c.ExitCode), copyInt64(c.DurationMs)
			p.Kind, p.Command = PartCommand, &c
		}
		out = append(out, p)
	}
	return out
}

// Text is the raw stream the parts reconstruct: every part's text in order.
func Text(parts []Part) string {
	n := 0
	for _, p := range parts {
		n += len(p.Text)
	}
	buf := make([]byte, 0, n)
	for _, p := range parts {
		buf = append(buf, p.Text...)
	}
	return string(buf)
}

// lastRunes returns the last n characters of s.
func lastRunes(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
