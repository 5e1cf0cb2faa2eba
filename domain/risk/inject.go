package risk

import (
	"regexp"
	"strings"
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
// whitespace, so quoting cannot split a phrase (R12).
func normaliseForInjection(s string) string {
	s = strings.ToLower(stripMarkers(s))
	s = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == ' ' {
			return r
		}
		switch r {
		case '\'', '"', '`', '\\':
			return -1
		case '\n', '\t', '\r':
			return ' '
		}
		if r < 0x80 {
			return r
		}
		if isInvisible(r) {
			return -1
		}
		if m, ok := foldRune(r); ok && len(m) == 1 {
			return rune(m[0])
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
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
		if m := findInjection(t); m != "" {
			if len(m) > 60 {
				m = m[:60] + "…"
			}
			f.add(Forbidden, "R12 prompt injection", "\""+m+"\"")
			return
		}
	}
}
