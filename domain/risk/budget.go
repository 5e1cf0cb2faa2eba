package risk

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxCheapNames bounds how many distinct command names cheapNames analyses.
const maxCheapNames = 64

// maxCheapSegment is the longest segment cheapNames parses; longer ones
// are classified by their command name alone.
const maxCheapSegment = 512

// cheapNames names the known commands of a line that was too large to
// analyse (R2 analysis budget). It does not parse the line: it splits it at
// the characters that can start a command (; & | newline parentheses
// braces backquote) and classifies the first word of each piece that is a
// known command, once per name. The verdict is already forbidden; this
// tells the person reading it what the line would have run.
func cheapNames(f *findings, src string) {
	seen := map[string]bool{}
	start := 0
	prev := ""
	for i := 0; i <= len(src) && len(seen) < maxCheapNames; i++ {
		if i < len(src) && strings.IndexByte(";&|\n(){}`", src[i]) < 0 {
			continue
		}
		// Padding repeats itself: a piece like the one before adds nothing.
		if seg := src[start:i]; seg != prev {
			cheapSegment(f, seg, seen)
			prev = seg
		}
		start = i + 1
	}
}

func cheapSegment(f *findings, seg string, seen map[string]bool) {
	rest := seg
	var name string
	for {
		var w string
		w, rest = firstWord(rest)
		if w == "" {
			return
		}
		if isKeyword(w) || strings.Contains(w, "=") && !strings.HasPrefix(w, "=") {
			continue
		}
		name = baseName(stripQuoting(w))
		break
	}
	if _, ok := handlers[name]; !ok || seen[name] {
		return
	}
	seen[name] = true
	text := strings.TrimSpace(seg)
	if len(text) > maxCheapSegment {
		text = name
	}
	file, err := parseScript(text)
	if err != nil {
		if file, err = parseScript(name); err != nil {
			return
		}
	}
	runAnalysis(f, file.Stmts)
}

// firstWord splits off the first blank-separated word of s.
func firstWord(s string) (string, string) {
	s = strings.TrimLeft(s, " \t$!")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// stripQuoting removes quotes and backslashes, the cheap way.
func stripQuoting(w string) string {
	if !strings.ContainsAny(w, "'\"\\") {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if c := w[i]; c != '\'' && c != '"' && c != '\\' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isKeyword reports the reserved words that may precede a command.
func isKeyword(w string) bool {
	switch w {
	case "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "for", "in", "case", "esac",
		"function", "time", "coproc", "select", "!", "{", "}", "[[", "]]":
		return true
	}
	return syntax.IsKeyword(w)
}
