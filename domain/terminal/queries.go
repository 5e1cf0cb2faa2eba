package terminal

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// QueryFilter removes from a stream of terminal output every sequence that
// asks the terminal to answer. What a program printed is kept in the
// scrollback and replayed to viewers who join later; a viewer's emulator
// would answer the queries in it again, and its answers would travel as
// typed input into the shell of the terminal's owner. So the scrollback
// keeps everything but the questions. Live output is not filtered: the
// program that asks is waiting for an answer, from whoever watches live.
//
// The list follows xterm's control sequences
// (https://invisible-island.net/xterm/ctlseqs/ctlseqs.html, patch #397) and
// the few other emulators' own queries that xterm.js or a local terminal
// under `shellgate attach` may answer:
//
//	ENQ (0x05)                 answerback
//	ESC Z, SCI (0x9A)          DECID, identify terminal (answered as DA1)
//	CSI Ps c                   DA1, primary device attributes
//	CSI > Ps c, CSI = Ps c     DA2, DA3 (secondary, tertiary)
//	CSI Ps n, CSI ? Ps n       DSR: status, CPR (6n), DECXCPR (?6n), printer,
//	                           UDK, keyboard, locator, colour scheme (?996n)…
//	CSI Ps $ p, CSI ? Ps $ p   DECRQM, request ANSI / DEC private mode
//	CSI > Ps q                 XTVERSION
//	CSI Ps ; … t               XTWINOPS reports: 11, 13, 14, 15, 16, 18, 19,
//	                           20, 21 (state, position, size, title)
//	CSI ? Pi ; Pa ; Pv S       XTSMGRAPHICS (answers every form)
//	CSI ? Pp m                 XTQMODKEYS, query key modifier options
//	CSI Ps x                   DECREQTPARM, request terminal parameters
//	CSI … * y                  DECRQCRA, request checksum of an area
//	CSI Ps $ u, CSI Ps $ w     DECRQTSR, DECRQPSR (state, presentation)
//	CSI & u                    DECRQUPSS, user-preferred supplemental set
//	CSI Ps ' |                 DECRQLP, request locator position
//	CSI " v, CSI , w, CSI + x  DECRQDE, DECRQKT, DECRQPKFM
//	CSI # R                    XTREPORTCOLORS, report the colour stack
//	CSI ? u                    the kitty keyboard protocol's flags query
//	DCS $ q Pt ST              DECRQSS, request selection or setting
//	DCS + q Pt ST              XTGETTCAP, request termcap/terminfo string
//	DCS tmux; … ST             tmux passthrough (carries sequences past tmux)
//	OSC 4/5 ; c ; ? ST         colour (and special colour) queries
//	OSC 10…19 ; ? ST           dynamic colours: fg, bg, cursor (10, 11, 12)…
//	OSC 50 ; ? ST              font query
//	OSC 52 ; c ; ? ST          clipboard read
//	OSC 60 ST, OSC 61 ST       XTQALLOWED, XTQDISALLOWED
//	OSC 1337 ; Report… ST      iTerm2's reports (cell size, variables)
//	SOS, PM, APC … ST          all of them: the kitty graphics protocol
//	                           answers through APC, and none shows anything
//
// A sequence split across reads is held until it is complete, so the cut
// falls anywhere; CAN and SUB abort a sequence (it is dropped, as the
// terminal would drop it); an escape sequence that is cut short by another
// is dropped too. C0 controls inside a control sequence are passed on at
// once, since a terminal executes them where they appear. An overlong
// control string is decided from its start: one that could be a query is
// dropped to its end, any other is passed through.
//
// It also tells where the output it keeps switches between the main and the
// alternate screen (FilterScreens), read from the same whole sequences, so
// that a switch split across reads is seen in the call that completes it.
//
// The zero value is ready to use. Like Decoder it belongs to one stream.
type QueryFilter struct {
	state   filterState
	seq     []byte // the sequence being read, introducer included
	carry   []byte // an incomplete UTF-8 sequence at the end of the last call
	dropped bool   // a backslash after this ESC would end a string already ended

	switches []ScreenSwitch // of the current call
	base     int            // len(dst) when the current call began
}

// ScreenSwitch is a place in filtered output where the program enters or
// leaves the alternate screen: DECSET or DECRST of mode 47, 1047 or 1049
// (any of them, alone or among other modes), or RIS, which leaves it.
type ScreenSwitch struct {
	// At is the offset, in the text the call returned, where the
	// switching sequence starts.
	At int
	// Alt is true when the sequence enters the alternate screen.
	Alt bool
}

type filterState uint8

const (
	fGround        filterState = iota
	fEsc                       // after ESC
	fEscInter                  // ESC followed by intermediates
	fCSI                       // reading a control sequence
	fCSISkip                   // an overlong control sequence, dropped to its final byte
	fString                    // reading an OSC or DCS string
	fStringEsc                 // ESC inside a string: ST or the start of another sequence
	fStringPass                // an overlong string that is no query, passed through
	fStringDrop                // a string dropped to its end
	fStringDropEsc             // ESC inside a dropped string
)

// Bounds on what is held while a sequence is read. No query is longer than
// these; a longer control sequence is garbage, and a longer string is
// decided from what its first bytes say.
const (
	maxCSI    = 256
	maxString = 1024
)

// FilterString returns s without the queries, holding back an unfinished
// sequence for the next call. Output without any escape comes back as it
// is, without copying.
func (f *QueryFilter) FilterString(s string) string {
	kept, _ := f.FilterScreens(s)
	return kept
}

// FilterScreens is FilterString, and also returns where the kept text
// switches screens, in order. The slice is the filter's own, good until
// the next call.
func (f *QueryFilter) FilterScreens(s string) (string, []ScreenSwitch) {
	if f.state == fGround && len(f.carry) == 0 && plain(s) {
		return s, nil
	}
	kept := string(f.Filter(nil, []byte(s)))
	return kept, f.switches
}

// plain reports whether s holds nothing the filter would look at.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 0x1b, 0x05, 0xc2:
			return false
		}
	}
	return true
}

// Flush ends the stream: a sequence still unfinished is dropped (a terminal
// would never act on it), and bytes of an unfinished character come back.
func (f *QueryFilter) Flush() string {
	out := string(f.carry)
	*f = QueryFilter{}
	return out
}

// Filter appends p without its queries to dst.
// Where it switches screens is in f.switches afterwards.
func (f *QueryFilter) Filter(dst, p []byte) []byte {
	f.switches, f.base = f.switches[:0], len(dst)
	if len(f.carry) > 0 {
		p = append(f.carry, p...)
		f.carry = nil
	}
	for len(p) > 0 {
		r, size := rune(p[0]), 1
		if r >= utf8.RuneSelf {
			if !utf8.FullRune(p) {
				f.carry = append([]byte(nil), p...)
				break
			}
			r, size = utf8.DecodeRune(p)
		}
		dst = f.step(dst, r, p[:size])
		p = p[size:]
	}
	return dst
}

// The C1 controls that matter here, as the code points UTF-8 text carries.
const (
	c1DCS = 0x90
	c1SOS = 0x98
	c1SCI = 0x9a
	c1CSI = 0x9b
	c1ST  = 0x9c
	c1OSC = 0x9d
	c1PM  = 0x9e
	c1APC = 0x9f
)

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// step feeds one character (raw: its bytes) through the state machine.
func (f *QueryFilter) step(dst []byte, r rune, raw []byte) []byte {
	switch r {
	case 0x18, 0x1a: // CAN, SUB: whatever was being read is cancelled
		f.reset()
		return append(dst, raw...)
	}
	switch f.state {
	case fGround:
		return f.ground(dst, r, raw)
	case fEsc, fEscInter:
		return f.escape(dst, r, raw)
	case fCSI, fCSISkip:
		return f.csi(dst, r, raw)
	case fString, fStringPass, fStringDrop:
		return f.str(dst, r, raw)
	case fStringEsc, fStringDropEsc:
		return f.strEsc(dst, r, raw)
	}
	return dst
}

func (f *QueryFilter) reset() {
	f.state = fGround
	f.seq = f.seq[:0]
	f.dropped = false
}

func (f *QueryFilter) begin(state filterState, raw []byte) {
	f.state = state
	f.seq = append(f.seq[:0], raw...)
}

func (f *QueryFilter) ground(dst []byte, r rune, raw []byte) []byte {
	switch r {
	case 0x1b:
		f.begin(fEsc, raw)
	case 0x05, c1SCI:
		// dropped: ENQ and DECID are questions
	case c1CSI:
		f.begin(fCSI, raw)
	case c1OSC, c1DCS:
		f.begin(fString, raw)
	case c1SOS, c1PM, c1APC:
		f.begin(fStringDrop, raw)
	default:
		return append(dst, raw...)
	}
	return dst
}

// c0 passes on a C0 control met inside a sequence, where the terminal
// executes it, except ENQ, which is a question wherever it is.
func c0(dst []byte, r rune, raw []byte) []byte {
	if r == 0x05 {
		return dst
	}
	return append(dst, raw...)
}

func (f *QueryFilter) escape(dst []byte, r rune, raw []byte) []byte {
	dropped := f.dropped
	f.dropped = false
	switch {
	case r == 0x1b:
		// The ESC before was cut short; this one starts afresh.
		f.begin(fEsc, raw)
	case isC1(r):
		f.reset()
		return f.ground(dst, r, raw)
	case r < 0x20:
		return c0(dst, r, raw)
	case r < 0x30:
		f.state = fEscInter
		f.seq = append(f.seq, raw...)
	case f.state == fEscInter || r > 0x7e:
		f.seq = append(f.seq, raw...)
		dst = append(dst, f.seq...)
		f.reset()
	default:
		switch r {
		case '[':
			f.begin(fCSI, []byte{0x1b, '['})
		case ']', 'P':
			f.begin(fString, []byte{0x1b, byte(r)})
		case 'X', '^', '_':
			f.begin(fStringDrop, nil)
		case 'Z':
			f.reset() // DECID
		case 'c':
			// RIS: a full reset, which shows the main screen.
			f.switches = append(f.switches, ScreenSwitch{At: len(dst) - f.base})
			dst = append(dst, 0x1b, 'c')
			f.reset()
		case '\\':
			// ST; when the string it ends was already ended (dropped,
			// or given its own ST), it is dropped too.
			if !dropped {
				dst = append(dst, 0x1b, '\\')
			}
			f.reset()
		default:
			dst = append(dst, 0x1b, byte(r))
			f.reset()
		}
	}
	return dst
}

func (f *QueryFilter) csi(dst []byte, r rune, raw []byte) []byte {
	switch {
	case r == 0x1b:
		f.begin(fEsc, raw) // the terminal drops the cut sequence, so do we
	case isC1(r):
		f.reset()
		return f.ground(dst, r, raw)
	case r < 0x20:
		return c0(dst, r, raw)
	case r >= 0x40 && r <= 0x7e:
		if f.state == fCSI {
			f.seq = append(f.seq, raw...)
			if body := csiBody(f.seq); !isQueryCSI(body) {
				if alt, ok := altScreenMode(body); ok {
					f.switches = append(f.switches, ScreenSwitch{At: len(dst) - f.base, Alt: alt})
				}
				dst = append(dst, f.seq...)
			}
		}
		f.reset()
	case f.state == fCSISkip:
	case len(f.seq)+len(raw) > maxCSI:
		f.state = fCSISkip
		f.seq = f.seq[:0]
	default:
		f.seq = append(f.seq, raw...)
	}
	return dst
}

// csiBody is a control sequence without its introducer: ESC [ and U+009B
// are both two bytes.
func csiBody(seq []byte) []byte { return seq[2:] }

func (f *QueryFilter) str(dst []byte, r rune, raw []byte) []byte {
	switch {
	case r == 0x1b:
		if f.state == fStringPass {
			// The terminal ends the string here; say so with an ST, so
			// that nothing after it can be read as the string's end.
			dst = append(dst, 0x1b, '\\')
			f.begin(fEsc, raw)
			f.dropped = true
			return dst
		}
		if f.state == fStringDrop || isQueryString(f.seq) {
			f.state = fStringDropEsc
			return dst
		}
		f.state = fStringEsc
		return dst
	case r == 0x07 || r == c1ST:
		switch f.state {
		case fString:
			if !isQueryString(f.seq) {
				dst = append(dst, f.seq...)
				dst = append(dst, raw...)
			}
		case fStringPass:
			dst = append(dst, raw...)
		}
		f.reset()
	case isC1(r):
		// Another sequence begins: the string ends here, and gets an ST
		// of its own so that it ends there for whoever reads the result.
		switch {
		case f.state == fString && !isQueryString(f.seq):
			dst = append(dst, f.seq...)
			dst = append(dst, 0x1b, '\\')
		case f.state == fStringPass:
			dst = append(dst, 0x1b, '\\')
		}
		f.reset()
		return f.ground(dst, r, raw)
	case f.state == fStringPass:
		return append(dst, raw...)
	case f.state == fStringDrop:
	case len(f.seq)+len(raw) > maxString:
		if mayBeQueryString(f.seq) {
			f.state = fStringDrop
		} else {
			dst = append(dst, f.seq...)
			dst = append(dst, raw...)
			f.state = fStringPass
		}
		f.seq = f.seq[:0]
	default:
		f.seq = append(f.seq, raw...)
	}
	return dst
}

// strEsc decides a string ended by ESC: ESC \ is its terminator; any other
// character after ESC starts a new sequence, and the string ended at the
// ESC, as a terminal ends it.
func (f *QueryFilter) strEsc(dst []byte, r rune, raw []byte) []byte {
	if r == 0x1b && f.state == fStringDropEsc {
		// ESC ESC is an escaped ESC inside tmux's passthrough: the string
		// goes on (and if it was not one, dropping more is still safe).
		f.state = fStringDrop
		return dst
	}
	drop := f.state == fStringDropEsc || isQueryString(f.seq)
	if r == '\\' {
		if !drop {
			dst = append(dst, f.seq...)
			dst = append(dst, 0x1b, '\\')
		}
		f.reset()
		return dst
	}
	if !drop {
		// An ST ends the string where the terminal ends it: without it,
		// what follows could complete the string into a query.
		dst = append(dst, f.seq...)
		dst = append(dst, 0x1b, '\\')
	}
	f.reset()
	f.begin(fEsc, []byte{0x1b})
	return f.escape(dst, r, raw)
}

// stringBody splits a string sequence into its kind ('P' or ']') and its
// text after the introducer.
func stringBody(seq []byte) (byte, []byte) {
	if seq[0] == 0x1b {
		return seq[1], seq[2:]
	}
	if seq[1] == c1DCS { // U+0090 is C2 90 in UTF-8
		return 'P', seq[2:]
	}
	return ']', seq[2:]
}

// isQueryString reports whether a whole OSC or DCS string asks for an
// answer.
func isQueryString(seq []byte) bool {
	kind, body := stringBody(seq)
	if kind == 'P' {
		return isQueryDCS(body)
	}
	ps, rest, _ := bytes.Cut(body, []byte{';'})
	n, err := strconv.Atoi(string(ps))
	if err != nil {
		return false
	}
	fields := bytes.Split(rest, []byte{';'})
	switch {
	case n == 4 || n == 5 || (n >= 10 && n <= 19):
		for _, f := range fields {
			if string(f) == "?" {
				return true
			}
		}
	case n == 50:
		return len(rest) > 0 && rest[0] == '?'
	case n == 52:
		return len(fields) >= 2 && string(fields[1]) == "?"
	case n == 60 || n == 61:
		return true
	case n == 1337:
		return bytes.HasPrefix(rest, []byte("Report")) || bytes.HasPrefix(rest, []byte("RequestUpload"))
	}
	return false
}

// mayBeQueryString decides an overlong string from its start: true when it
// is of a kind that can ask, so the rest is dropped.
func mayBeQueryString(seq []byte) bool {
	kind, body := stringBody(seq)
	if kind == 'P' {
		return isQueryDCS(body)
	}
	ps, _, found := bytes.Cut(body, []byte{';'})
	n, err := strconv.Atoi(string(ps))
	if !found || err != nil {
		return true
	}
	switch {
	case n == 4 || n == 5 || (n >= 10 && n <= 19), n == 50, n == 52, n == 60, n == 61, n == 1337:
		return true
	}
	return false
}

// isQueryDCS reports whether a device control string (the text after DCS)
// asks for an answer: DECRQSS, XTGETTCAP, or tmux's passthrough.
func isQueryDCS(body []byte) bool {
	if bytes.HasPrefix(body, []byte("tmux;")) {
		return true
	}
	i := 0
	for i < len(body) && body[i] >= 0x30 && body[i] <= 0x3f {
		i++
	}
	rest := body[i:]
	return bytes.HasPrefix(rest, []byte("$q")) || bytes.HasPrefix(rest, []byte("+q"))
}

// isQueryCSI reports whether a control sequence (parameters, intermediates
// and final byte, without CSI) asks for an answer.
func isQueryCSI(body []byte) bool {
	final := body[len(body)-1]
	body = body[:len(body)-1]
	var prefix byte
	if len(body) > 0 && body[0] >= '<' && body[0] <= '?' {
		prefix, body = body[0], body[1:]
	}
	i := len(body)
	for i > 0 && body[i-1] >= 0x20 && body[i-1] <= 0x2f {
		i--
	}
	params, inter := body[:i], string(body[i:])
	switch inter {
	case "":
		switch final {
		case 'c':
			return true // DA1, DA2, DA3
		case 'n':
			return prefix == 0 || prefix == '?' // DSR, CPR, DEC DSR
		case 'q':
			return prefix == '>' // XTVERSION
		case 't':
			return prefix == 0 && isWindowReport(params)
		case 'S':
			return prefix == '?' // XTSMGRAPHICS
		case 'm':
			return prefix == '?' // XTQMODKEYS
		case 'x':
			return prefix == 0 // DECREQTPARM
		case 'u':
			return prefix == '?' // kitty keyboard flags
		}
	case "$":
		return final == 'p' || final == 'u' || final == 'w' // DECRQM, DECRQTSR, DECRQPSR
	case "*":
		return final == 'y' // DECRQCRA
	case "&":
		return final == 'u' // DECRQUPSS
	case "'":
		return final == '|' // DECRQLP
	case "\"":
		return final == 'v' // DECRQDE
	case ",":
		return final == 'w' // DECRQKT
	case "+":
		return final == 'x' // DECRQPKFM
	case "#":
		return final == 'R' // XTREPORTCOLORS
	}
	return false
}

// altScreenMode reports whether a control sequence (without CSI) sets or
// resets one of the alternate screen's modes, and which: CSI ? Pm h enters
// it, CSI ? Pm l leaves it, when Pm holds 47, 1047 or 1049.
func altScreenMode(body []byte) (enter, ok bool) {
	final := body[len(body)-1]
	if (final != 'h' && final != 'l') || body[0] != '?' {
		return false, false
	}
	for _, p := range bytes.Split(body[1:len(body)-1], []byte{';'}) {
		switch string(p) {
		case "47", "1047", "1049":
			return final == 'h', true
		}
	}
	return false, false
}

// isWindowReport reports whether XTWINOPS parameters ask for a report.
func isWindowReport(params []byte) bool {
	first, _, _ := bytes.Cut(params, []byte{';'})
	n, err := strconv.Atoi(string(first))
	if err != nil {
		return false
	}
	switch n {
	case 11, 13, 14, 15, 16, 18, 19, 20, 21:
		return true
	}
	return false
}
