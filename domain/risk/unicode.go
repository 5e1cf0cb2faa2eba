package risk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// confusables maps characters that render like ASCII to that ASCII (a subset
// of the UTS #39 confusables: Cyrillic, Greek, Armenian and punctuation that
// commonly stand in for Latin letters, dashes and slashes).
var confusables = map[rune]string{
	// Cyrillic
	'а': "a", 'в': "b", 'е': "e", 'о': "o", 'р': "p", 'с': "c", 'у': "y", 'х': "x", 'і': "i", 'ј': "j", 'ѕ': "s",
	'ԁ': "d", 'һ': "h", 'ԛ': "q", 'ԝ': "w", 'ӏ': "l", 'ё': "e", 'к': "k", 'м': "m", 'н': "h", 'т': "t", 'г': "r", 'п': "n",
	'А': "A", 'В': "B", 'Е': "E", 'К': "K", 'М': "M", 'Н': "H", 'О': "O", 'Р': "P", 'С': "C", 'Т': "T",
	'Х': "X", 'І': "I", 'Ј': "J", 'Ѕ': "S", 'У': "Y", 'Ԁ': "D", 'Ԛ': "Q", 'Ԝ': "W",
	// Greek
	'α': "a", 'ο': "o", 'ν': "v", 'ι': "i", 'κ': "k", 'ρ': "p", 'τ': "t", 'υ': "u", 'χ': "x", 'ε': "e", 'γ': "y",
	'Α': "A", 'Β': "B", 'Ε': "E", 'Ζ': "Z", 'Η': "H", 'Ι': "I", 'Κ': "K", 'Μ': "M", 'Ν': "N", 'Ο': "O",
	'Ρ': "P", 'Τ': "T", 'Υ': "Y", 'Χ': "X",
	// Latin look-alikes and Armenian
	'ı': "i", 'ȷ': "j", 'ɑ': "a", 'ɡ': "g", 'ǀ': "l", 'ℓ': "l", 'օ': "o", 'ս': "u", 'ո': "n", 'հ': "h", 'ց': "g",
	'ʟ': "l", 'ᴅ': "d", 'ꜱ': "s", 'ɪ': "i", 'ʀ': "r", 'ᴍ': "m", 'ᴋ': "k",
	// Punctuation
	'‐': "-", '‑': "-", '‒': "-", '–': "-", '—': "-", '―': "-", '−': "-", '﹣': "-", '⁃': "-",
	'∕': "/", '⁄': "/", '⧸': "/", '⧵': "\\",
	'\u037e': ";", '꞉': ":", '∶': ":", 'ː': ":", '･': ".", '․': ".", '‧': ".",
	// Ligatures (NFKC)
	'ﬀ': "ff", 'ﬁ': "fi", 'ﬂ': "fl", 'ﬃ': "ffi", 'ﬄ': "ffl", 'ﬅ': "st", 'ﬆ': "st",
}

// isInvisible reports zero-width, bidi and other invisible format characters.
func isInvisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5, r == 0x180E,
		r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F,
		r == 0x3164, r == 0xFEFF, r == 0xFFA0, r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0000 && r <= 0xE007F:
		return true
	}
	return false
}

// isBidi reports the bidi controls of Trojan Source.
func isBidi(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

func isUnicodeSpace(r rune) bool {
	return r == 0x00A0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200A) || r == 0x202F || r == 0x205F || r == 0x3000
}

// foldRune maps one rune to the ASCII it stands for: compatibility forms
// (fullwidth, mathematical alphanumerics), confusables and unicode spaces.
// ok is false when the rune has no ASCII reading.
func foldRune(r rune) (string, bool) {
	switch {
	case r < utf8.RuneSelf:
		return string(r), true
	case isInvisible(r):
		return "", true
	case isUnicodeSpace(r):
		return " ", true
	case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
		return string(r - 0xFEE0), true
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical letters, 52 per style
		i := (r - 0x1D400) % 52
		if i < 26 {
			return string('A' + i), true
		}
		return string('a' + i - 26), true
	case r >= 0x1D7CE && r <= 0x1D7FF: // mathematical digits, 10 per style
		return string('0' + (r-0x1D7CE)%10), true
	case r >= 0x2070 && r <= 0x2079 || r == 0x00B9 || r == 0x00B2 || r == 0x00B3: // superscript digits
		switch r {
		case 0x00B9:
			return "1", true
		case 0x00B2:
			return "2", true
		case 0x00B3:
			return "3", true
		}
		return string('0' + r - 0x2070), true
	case r >= 0x24D0 && r <= 0x24E9: // circled small letters
		return string('a' + r - 0x24D0), true
	}
	if s, ok := confusables[r]; ok {
		return s, true
	}
	return "", false
}

// foldResult describes what folding found in one string.
type foldResult struct {
	folded    string
	nonASCII  bool // any non-ASCII rune at all
	deceptive bool // the string reads as ASCII but is not (R19)
}

// foldDeceptive applies the R19 normalisation to s. A string counts as
// deceptive when it contains invisible characters or when every non-ASCII
// rune in it has an ASCII reading (it is built to look like ASCII); a word
// in a real non-Latin script (привет, 日本) is ordinary text.
func foldDeceptive(s string) foldResult {
	res := foldResult{folded: s}
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return res
	}
	res.nonASCII = true
	var b strings.Builder
	allMapped, invisible, sawLetter, mappedLetter := true, false, false, false
	for _, r := range s {
		if r == markOpen || r == markClose {
			b.WriteRune(r)
			continue
		}
		if isInvisible(r) && !isZWJInEmoji(s, r) {
			invisible = true
		}
		if m, ok := foldRune(r); ok {
			b.WriteString(m)
			if m != "" && (unicode.IsLetter(rune(m[0])) || unicode.IsDigit(rune(m[0]))) {
				mappedLetter = true
			}
			continue
		}
		if unicode.IsLetter(r) {
			sawLetter = true
		}
		allMapped = false
		b.WriteRune(r)
	}
	res.folded = b.String()
	res.deceptive = invisible || (allMapped && !sawLetter && mappedLetter)
	return res
}

// isZWJInEmoji spares the zero-width joiner inside emoji sequences.
func isZWJInEmoji(s string, r rune) bool {
	if r != 0x200D && r != 0xFE0F {
		return false
	}
	for _, x := range s {
		if x >= 0x1F000 {
			return true
		}
	}
	return false
}

// foldUnicode applies R19 to a command's words: the name and options are
// classified as their ASCII reading (re-split on normalised spaces) with a
// floor of high; other arguments keep their text but still get the floor
// when they only pretend to be ASCII. reparse is set when the folded name
// holds shell syntax (a fullwidth semicolon, say) and the line must be
// parsed again.
func (a *analyzer) foldUnicode(argv []field) ([]field, bool) {
	changed := false
	for _, f := range argv {
		if strings.IndexFunc(f.s, func(r rune) bool { return r >= utf8.RuneSelf && r != markOpen && r != markClose }) >= 0 {
			changed = true
			break
		}
	}
	if !changed {
		return argv, false
	}
	out := make([]field, 0, len(argv))
	reparse := false
	for i, f := range argv {
		res := foldDeceptive(f.s)
		if !res.nonASCII {
			out = append(out, f)
			continue
		}
		isOpt := strings.HasPrefix(res.folded, "-")
		fakeDash := isOpt && !strings.HasPrefix(f.s, "-")
		switch {
		case i == 0:
			a.add(High, "R19 unicode", "non-ASCII characters in command name "+printable(f.s))
			if res.folded != f.s {
				if strings.ContainsAny(res.folded, ";|&<>()`$") {
					reparse = true
				}
				for _, part := range strings.Fields(res.folded) {
					out = append(out, field{s: part, fl: f.fl | fUnicode})
				}
				continue
			}
		case (res.deceptive || fakeDash) && isOpt:
			a.add(High, "R19 unicode", "look-alike characters in option "+printable(f.s))
			for _, part := range strings.Fields(res.folded) {
				out = append(out, field{s: part, fl: f.fl | fUnicode})
			}
			continue
		case res.deceptive:
			a.add(High, "R19 unicode", "look-alike or invisible characters in argument "+printable(f.s))
			f.fl |= fUnicode
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		out = append(out, field{})
	}
	return out, reparse
}

// scanRawText applies the checks that look at the raw line: bidi controls
// (Trojan Source) anywhere set a floor of high (R19).
func scanRawText(f *findings, s string) {
	for _, r := range s {
		if isBidi(r) {
			f.add(High, "R19 unicode", "bidirectional control character in the command")
			break
		}
	}
	if strings.IndexFunc(s, func(r rune) bool { return isInvisible(r) && !isBidi(r) && !isZWJInEmoji(s, r) }) >= 0 {
		f.add(High, "R19 unicode", "invisible character in the command")
	}
	f.addText(s)
}
