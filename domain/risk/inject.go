package risk

import (
	"regexp"
	"strings"
	"unicode"
)

// injectionPattern is one R12 phrase shape with the literal words it
// needs, so most texts are rejected by a substring check before any regexp
// runs. Each shape needs the override structure: single words such as
// "ignore" or "instructions" never match.
type injectionPattern struct {
	needs []string // at least one must occur
	rx    *regexp.Regexp
}

var injectionPatterns = []injectionPattern{
	{[]string{"ignore", "disregard", "forget", "override", "bypass", "skip"},
		regexp.MustCompile(`\b(ignore|disregard|forget|override|bypass|skip)\s+(all\s+|any\s+|the\s+|your\s+|my\s+|of\s+|every\s+)*(previous|prior|above|earlier|preceding|former|original|system|existing)\s+(instructions?|rules?|directions?|prompts?|guidelines?|directives?|commands?|orders?|messages?|guidance|constraints?)\b`)},
	{[]string{"forget"}, regexp.MustCompile(`\bforget\s+(all\s+)?(of\s+)?(your|the)\s+(rules|instructions|guidelines|training|programming|restrictions)\b`)},
	{[]string{"you are now"}, regexp.MustCompile(`\byou\s+are\s+now\s+(in\s+)?(an?\s+|the\s+)?[\w\s-]{0,40}?\bmode\b`)},
	{[]string{" dan"}, regexp.MustCompile(`\b(act|behave|respond)\s+as\s+(an?\s+)?dan\b`)},
	{[]string{"mode enabled", "mode activated", "mode on"}, regexp.MustCompile(`\b(dan|developer|god|jailbreak|unrestricted)\s+mode\s+(enabled|activated|on)\b`)},
	{[]string{"system"}, regexp.MustCompile(`\[\s*/?\s*system\s*\]|<\|?\s*im_start\s*\|?>\s*system|#{2,}\s*system\s*(prompt|message)?\s*:`)},
	{[]string{"<|"}, regexp.MustCompile(`<\|\s*(system|im_start|im_end|endoftext)\s*\|>`)},
	{[]string{"<<sys", "[inst]"}, regexp.MustCompile(`<<\s*sys\s*>>|\[inst\]`)},
	{[]string{"approved", "authori", "confirmed"}, regexp.MustCompile(`\bthe\s+(user|administrator|admin|operator|human|owner)\s+(has\s+|have\s+)?(already\s+|explicitly\s+)?(pre-?\s*)?(approved|authori[sz]ed|confirmed)\b`)},
	{[]string{"ask"}, regexp.MustCompile(`\b(do\s+not|don'?t|never|no\s+need\s+to)\s+ask\s+(the\s+user\s+)?(for\s+)?(confirmation|approval|permission)\b`)},
	{[]string{"without"}, regexp.MustCompile(`\bwithout\s+(asking\s+for\s+)?(confirmation|approval)\s+from\s+the\s+user\b`)},
}

// normaliseForInjection lower-cases, drops quote characters and collapses
// whitespace, so quoting cannot split a phrase (R12). It makes one pass:
// a megabyte of text is normalised in a few milliseconds.
func normaliseForInjection(s string) string {
	s = stripMarkers(s)
	var b strings.Builder
	b.Grow(len(s))
	pending := false // a run of whitespace was seen after some text
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r >= 0x80:
			r = unicode.ToLower(r)
		}
		switch {
		case r >= 'a' && r <= 'z':
		case r == '\'' || r == '"' || r == '`' || r == '\\':
			continue
		case unicode.IsSpace(r):
			pending = b.Len() > 0
			continue
		case r < 0x80:
		case isInvisible(r):
			continue
		default:
			if m, ok := foldRune(r); ok && len(m) == 1 {
				r = rune(m[0])
			}
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// findInjection returns the matching phrase, or "".
func findInjection(s string) string {
	n := normaliseForInjection(s)
	for _, p := range injectionPatterns {
		hit := false
		for _, w := range p.needs {
			if strings.Contains(n, w) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		if m := p.rx.FindString(n); m != "" {
			return m
		}
	}
	return ""
}

// scanTexts applies R12 to every payload the analysis saw.
func scanTexts(f *findings) {
	for _, t := range f.texts {
		if len(t) >= 4096 && t != f.raw && strings.Contains(f.raw, t) {
			// A long payload copied verbatim from the line (a quoted
			// here-doc body) is scanned as part of the line itself.
			continue
		}
		if m := findInjection(t); m != "" {
			if len(m) > 60 {
				m = m[:60] + "…"
			}
			f.add(Forbidden, "R12 prompt injection", "\""+m+"\"")
			return
		}
	}
}
