// Package screen is the terminal host's screen model, on
// github.com/charmbracelet/x/vt: an emulator per pty terminal, fed its
// output, that serializes its screen as a VT byte stream a viewer's terminal
// replays to show the same thing.
package screen

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"github.com/shellgate/shellgate/ports"
)

// Factory makes vt-backed screen models.
type Factory struct{}

// New returns the factory.
func New() Factory { return Factory{} }

var _ ports.Screens = Factory{}

// NewScreen returns a blank screen of the size.
func (Factory) NewScreen(cols, rows int) ports.Screen { return NewScreen(cols, rows) }

// Screen is one terminal's model.
type Screen struct {
	emu *vt.Emulator
	// modes are the DEC (private) and ANSI modes set now that differ from
	// a blank terminal's, as the emulator reports them.
	modes map[ansi.Mode]bool
	// region is each screen's scroll region, rows [top, bottom) ; zero
	// means the whole screen.
	region [2][2]int
	// main is the main screen drawn at the moment the alternate screen was
	// entered: the emulator does not show the main one meanwhile, and
	// nothing reaches it until the program leaves the alternate screen.
	// A blank main screen is not kept: the host starts a model where the
	// program enters the alternate screen, so the model's main screen is
	// blank and the viewer's own (drawn from the scrollback) is the one
	// to leave under the alternate screen.
	main      string
	mainSaved bool

	// pending is plain text (no escapes, no controls but tab, CR, LF,
	// backspace, bell) not yet fed to the emulator. The emulator copies
	// every cell of the screen for each line it scrolls, which makes a
	// flood of plain lines very slow through it; of a run of plain lines
	// only the last screenful can show, so only the last ones are fed,
	// when the screen is next looked at or other output comes.
	pending []byte
	// pendingCut says that lines were already left out of pending's head
	// (pending starts after a CR LF).
	pendingCut bool
}

// maxPending bounds the plain text held back before it is fed anyway.
const maxPending = 64 << 10

// NewScreen returns a blank screen of the size.
func NewScreen(cols, rows int) *Screen {
	s := &Screen{emu: vt.NewEmulator(cols, rows), modes: map[ansi.Mode]bool{}}
	// The host keeps the scrollback; the emulator's own would hold up to
	// 10,000 lines of cells per terminal. It cannot be turned off, only
	// made one line long.
	s.emu.SetScrollbackSize(1)
	s.emu.SetCallbacks(vt.Callbacks{
		EnableMode:  func(m ansi.Mode) { s.noteMode(m, true) },
		DisableMode: func(m ansi.Mode) { s.noteMode(m, false) },
	})
	// The emulator answers queries into a pipe that nothing here reads: an
	// answer would block the writer, under the host's lock. The host takes
	// queries out before they get here; should one still come, the
	// emulator's answering handlers are shadowed by ones that do nothing.
	quiet := func(ansi.Params) bool { return true }
	for _, cmd := range []int{
		'c', ansi.Command('>', 0, 'c'), // DA1, DA2
		'n', ansi.Command('?', 0, 'n'), // DSR, DEC DSR
		ansi.Command(0, '$', 'p'), ansi.Command('?', '$', 'p'), // DECRQM
	} {
		s.emu.RegisterCsiHandler(cmd, quiet)
	}
	for _, cmd := range []int{10, 11, 12} {
		s.emu.RegisterOscHandler(cmd, func(data []byte) bool { return bytes.Contains(data, []byte("?")) })
	}
	// Mode 2048 (in-band resize reports) answers when set and on every
	// resize: a sequence setting it is ignored whole.
	s.emu.RegisterCsiHandler(ansi.Command('?', 0, 'h'), func(params ansi.Params) bool {
		for _, p := range params {
			if p.Param(-1) == 2048 {
				return true
			}
		}
		s.beforeModeSet(params)
		return false
	})
	// Scroll regions, which the emulator keeps to itself: watched on the
	// way in, and the emulator then sets them.
	s.emu.RegisterCsiHandler('r', func(params ansi.Params) bool {
		s.noteRegion(params)
		return false
	})
	s.emu.RegisterEscHandler('c', func() bool { // RIS
		s.modes = map[ansi.Mode]bool{}
		s.region = [2][2]int{}
		s.main, s.mainSaved = "", false
		return false
	})
	return s
}

// defaults are the modes a blank terminal has set.
var defaults = map[ansi.Mode]bool{ansi.ModeAutoWrap: true, ansi.ModeTextCursorEnable: true}

func (s *Screen) noteMode(m ansi.Mode, on bool) {
	switch m {
	case ansi.ModeAltScreen, ansi.ModeAltScreenSaveCursor, ansi.ModeSaveCursor:
		return // the screen itself says which one is shown
	}
	if on == defaults[m] {
		delete(s.modes, m)
		return
	}
	s.modes[m] = on
}

// beforeModeSet draws the main screen before the program switches to the
// alternate one.
func (s *Screen) beforeModeSet(params ansi.Params) {
	if s.emu.IsAltScreen() {
		return
	}
	for _, p := range params {
		switch p.Param(-1) {
		case 47, 1047, 1049:
			var drawn bool
			s.main, drawn = s.draw()
			s.mainSaved = drawn
			if !drawn {
				s.main = ""
			}
			return
		}
	}
}

func (s *Screen) screenIndex() int {
	if s.emu.IsAltScreen() {
		return 1
	}
	return 0
}

// noteRegion follows DECSTBM as the emulator reads it.
func (s *Screen) noteRegion(params ansi.Params) {
	top, _, _ := params.Param(0, 1)
	bottom, _, _ := params.Param(1, s.emu.Height())
	if top < 1 {
		top = 1
	}
	if bottom < 1 || bottom > s.emu.Height() {
		bottom = s.emu.Height()
	}
	if top >= bottom {
		return
	}
	if top == 1 && bottom == s.emu.Height() {
		s.region[s.screenIndex()] = [2]int{}
		return
	}
	s.region[s.screenIndex()] = [2]int{top - 1, bottom}
}

// Write feeds output.
func (s *Screen) Write(text string) {
	if s.plainScrolls() && isPlain(text) {
		s.pending = append(s.pending, text...)
		if len(s.pending) > maxPending {
			// Leave out the head that scrolls off; when there is no line
			// to cut at, feed it.
			if cut := s.cutPoint(); cut > 0 {
				s.pending = append(s.pending[:0], s.pending[cut:]...)
				s.pendingCut = true
			} else {
				s.cutLongLine()
			}
			if len(s.pending) > maxPending {
				s.flush()
			}
		}
		return
	}
	s.flush()
	s.write(text)
}

// plainScrolls reports whether plain lines scroll the whole screen, so that
// those that scroll off can be left out: no scroll region, no origin mode,
// no left and right margins.
func (s *Screen) plainScrolls() bool {
	return s.region[s.screenIndex()] == [2]int{} && !s.modes[ansi.ModeOrigin] && !s.modes[ansi.ModeLeftRightMargin]
}

// isPlain reports whether text holds nothing but printable characters and
// tab, CR, LF, backspace and bell.
func isPlain(text string) bool {
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\t' || c == '\r' || c == '\n' || c == '\b' || c == '\a':
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(text) && text[i+1] >= 0x80 && text[i+1] <= 0x9f:
			return false // a C1 control
		}
	}
	return true
}

// flush feeds the plain text held back. Of it, what comes before the last
// 2×rows line feeds that each follow a CR is left out: it all scrolls off.
// From a CR LF on, the cursor is at column 0 either way (a CR is written
// first to make sure), and 2×rows line feeds take any cursor to the bottom
// and scroll whatever was above off the screen, so what shows is the same.
func (s *Screen) flush() {
	if len(s.pending) == 0 {
		return
	}
	if cut := s.cutPoint(); cut > 0 {
		s.write("\r" + string(s.pending[cut:]))
	} else if s.pendingCut {
		s.write("\r" + string(s.pending))
	} else {
		s.write(string(s.pending))
	}
	s.pending, s.pendingCut = s.pending[:0], false
	if cap(s.pending) > 2*maxPending {
		s.pending = nil
	}
}

// cutLongLine shortens a long run of ASCII printable characters at the end
// of pending (one line with no line feed, `yes | tr -d '\n'`): with
// autowrap on, each char lands cols columns after the one cols before it,
// so leaving out whole multiples of cols from the run's start changes no
// column, and the 2×rows rows of it kept scroll whatever came before off.
func (s *Screen) cutLongLine() {
	if _, off := s.modes[ansi.ModeAutoWrap]; off || s.modes[ansi.ModeInsertReplace] {
		return
	}
	p := s.pending
	j := len(p)
	for j > 0 && p[j-1] >= 0x20 && p[j-1] < 0x7f {
		j--
	}
	cols, rows := s.emu.Width(), s.emu.Height()
	run := len(p) - j
	keep := 2 * rows * cols
	if run < 2*keep {
		return
	}
	drop := (run - keep) / cols * cols
	s.pending = append(p[:j], p[j+drop:]...)
}

// cutPoint is where the pending text may start (just after a CR LF
// followed by 2×rows line feeds), or 0.
func (s *Screen) cutPoint() int {
	p := s.pending
	need := 2 * s.emu.Height()
	feeds := 0
	for i := len(p) - 1; i > 0; i-- {
		if p[i] != '\n' {
			continue
		}
		if feeds >= need && p[i-1] == '\r' {
			return i + 1
		}
		feeds++
	}
	return 0
}

func (s *Screen) write(text string) {
	if !s.emu.IsAltScreen() && s.mainSaved {
		s.main, s.mainSaved = "", false
	}
	_, _ = s.emu.WriteString(text)
	if !s.emu.IsAltScreen() && s.mainSaved {
		s.main, s.mainSaved = "", false
	}
}

// Resize follows the window size; the emulator then resets the margins.
func (s *Screen) Resize(cols, rows int) {
	if cols == s.emu.Width() && rows == s.emu.Height() {
		return
	}
	s.flush()
	s.emu.Resize(cols, rows)
	s.region = [2][2]int{}
}

// Close lets go of the model.
func (s *Screen) Close() { _ = s.emu.Close() }

// Rows is the shown screen as text, a string per row without trailing
// blanks.
func (s *Screen) Rows() []string {
	s.flush()
	rows := make([]string, s.emu.Height())
	for y := range rows {
		rows[y] = strings.TrimRight(s.line(y).String(), " ")
	}
	return rows
}

func (s *Screen) line(y int) uv.Line {
	w := s.emu.Width()
	line := make(uv.Line, w)
	for x := 0; x < w; x++ {
		if c := s.emu.CellAt(x, y); c != nil {
			line[x] = *c
		} else {
			line[x] = uv.EmptyCell
		}
	}
	return line
}

// draw paints the shown screen's cells, row by row from its top left, and
// reports whether any row holds something.
func (s *Screen) draw() (string, bool) {
	var b strings.Builder
	b.WriteString("\x1b[0m\x1b[H\x1b[2J")
	drawn := false
	for y := 0; y < s.emu.Height(); y++ {
		r := s.line(y).Render()
		if strings.TrimRight(r, " ") == "" {
			continue
		}
		drawn = true
		fmt.Fprintf(&b, "\x1b[%dH%s", y+1, r)
	}
	b.WriteString("\x1b[0m")
	return b.String(), drawn
}

// Serialize draws the screen on a blank terminal of its size. Under the
// alternate screen it draws the main one only when the model saw
// something on it.
func (s *Screen) Serialize() string {
	s.flush()
	var b strings.Builder
	// A terminal that is not blank (one that replayed the scrollback
	// first, a person's own under attach) starts from a soft reset and the
	// modes that it leaves alone switched off. Autowrap is off while
	// painting: a full last column must not scroll.
	b.WriteString(baseline)
	b.WriteString("\x1b[?7l")
	if s.emu.IsAltScreen() {
		if s.mainSaved {
			b.WriteString(s.main)
		}
		b.WriteString("\x1b[?1049h")
	}
	shown, _ := s.draw()
	b.WriteString(shown)
	b.WriteString("\x1b[?7h")
	if r := s.region[s.screenIndex()]; r != [2]int{} {
		fmt.Fprintf(&b, "\x1b[%d;%dr", r[0]+1, r[1])
	}
	modes := make([]ansi.Mode, 0, len(s.modes))
	for m := range s.modes {
		modes = append(modes, m)
	}
	sort.Slice(modes, func(i, j int) bool { return modes[i].Mode() < modes[j].Mode() })
	origin := false
	for _, m := range modes {
		if m == ansi.ModeOrigin {
			origin = s.modes[m]
			continue // set below, after the cursor is placed relative to it
		}
		if m == ansi.ModeNumericKeypad {
			if s.modes[m] {
				b.WriteString("\x1b=")
			}
			continue
		}
		b.WriteString(modeSeq(m, s.modes[m]))
	}
	pos := s.emu.CursorPosition()
	if origin {
		b.WriteString("\x1b[?6h")
		top := s.region[s.screenIndex()][0]
		fmt.Fprintf(&b, "\x1b[%d;%dH", pos.Y-top+1, pos.X+1)
	} else {
		fmt.Fprintf(&b, "\x1b[%d;%dH", pos.Y+1, pos.X+1)
	}
	if style, blink := s.emu.CursorStyle(); style != vt.CursorBlock || !blink {
		fmt.Fprintf(&b, "\x1b[%d q", cursorStyle(style, blink))
	}
	return b.String()
}

// baseline is DECSTR (SGR, scroll region, origin, insert, cursor shown,
// keypad numeric, autowrap) and then the modes DECSTR keeps: cursor keys,
// mouse reporting, focus events, bracketed paste.
const baseline = "\x1b[!p\x1b[?1l\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1004l\x1b[?1006l\x1b[?2004l\x1b[0 q"

func modeSeq(m ansi.Mode, on bool) string {
	end := "l"
	if on {
		end = "h"
	}
	if _, dec := m.(ansi.DECMode); dec {
		return fmt.Sprintf("\x1b[?%d%s", m.Mode(), end)
	}
	return fmt.Sprintf("\x1b[%d%s", m.Mode(), end)
}

// cursorStyle is DECSCUSR's parameter.
func cursorStyle(style vt.CursorStyle, blink bool) int {
	n := 2*int(style) + 1
	if !blink {
		n++
	}
	return n
}
