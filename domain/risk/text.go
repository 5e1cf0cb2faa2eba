package risk

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"path"
	"regexp"
	"slices"
	"strings"
)

// The handlers here compute the output of pure text commands so that a
// payload built with them (echo … | base64 -d | sh) is classified (R4).

func hEcho(c *call) {
	args := c.args()
	newline, escapes := true, false
	for len(args) > 0 && len(args[0].s) > 1 && args[0].s[0] == '-' && strings.Trim(args[0].s[1:], "neE") == "" {
		if strings.Contains(args[0].s, "n") {
			newline = false
		}
		if strings.Contains(args[0].s, "e") {
			escapes = true
		}
		args = args[1:]
	}
	text, fl := joinFields(args)
	fl &= contentFlags
	if escapes && strings.ContainsRune(text, '\\') {
		if s, _, err := c.a.f.exp.Format("%b", []string{text}); err == nil {
			text = s
			fl |= fDecoded
		}
	}
	if newline {
		text += "\n"
	}
	c.add(Safe, "R15 read-only", "echo")
	c.setOut(textStream(text, fl))
}

// rxOctalB is printf %b's octal escape \0nnn.
var rxOctalB = regexp.MustCompile(`\\0([0-7]{1,3})`)

func hPrintf(c *call) {
	args := c.args()
	c.add(Safe, "R15 read-only", "printf")
	varName := ""
	if len(args) >= 2 && args[0].s == "-v" {
		varName = args[1].s
		args = args[2:]
	}
	if len(args) > 0 && args[0].s == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		c.setOut(stream{})
		return
	}
	var fl fflags
	for _, a := range args {
		fl |= a.fl & contentFlags
	}
	format := args[0].s
	rest := fieldStrings(args[1:])
	if rxWideFormat.MatchString(format) {
		// A huge width or precision would only build a huge string.
		c.setOut(unknownStream(fl))
		return
	}
	if hasEscape(format) || (strings.Contains(format, "%b") && slices.ContainsFunc(rest, hasEscape)) {
		fl |= fDecoded
	}
	if strings.Contains(format, "%b") {
		// %b reads \0nnn as an octal escape (up to three digits after the
		// 0), where a format string reads \nnn.
		for i, r := range rest {
			rest[i] = rxOctalB.ReplaceAllString(r, `\$1`)
		}
	}
	var b strings.Builder
	for i := 0; i < 64; i++ {
		s, n, err := c.a.f.exp.Format(format, rest)
		if err != nil {
			c.setOut(unknownStream(fl))
			return
		}
		b.WriteString(s)
		if n == 0 || n >= len(rest) {
			break
		}
		rest = rest[n:]
	}
	if varName != "" {
		c.sc.set(varName, b.String())
		c.setOut(stream{})
		return
	}
	c.setOut(textStream(b.String(), fl))
}

var rxWideFormat = regexp.MustCompile(`%[-+ #0'*]*[0-9]{4,}|%[^a-zA-Z%]*\.[0-9]{4,}|%[^a-zA-Z%]*\*`)

// hasEscape reports printf/echo escapes that hide characters (\x72, \162,
// \u0072), as opposed to plain \n and \t.
func hasEscape(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		switch s[i+1] {
		case 'x', 'u', 'U', '0', '1', '2', '3', '4', '5', '6', '7':
			return true
		}
		i++
	}
	return false
}

// hCat passes its input through, or reads files whose content is unknown.
func hCat(c *call) {
	c.add(Safe, "R15 read-only", c.name)
	files := getopt(c.args(), "", nil, true).pos
	if len(files) == 0 || (len(files) == 1 && files[0].s == "-") {
		out := c.in
		out.piped = true
		if !c.in.piped {
			out = unknownStream(0)
		}
		c.setOut(out)
		return
	}
	var out stream
	for _, f := range files {
		if s, ok := c.a.fdStreams[f.s]; ok {
			out = concat(out, s)
			continue
		}
		if f.s == "-" || f.s == "/dev/stdin" {
			out = concat(out, c.in)
			continue
		}
		fl := c.a.readTarget(c.sc, f)
		out = concat(out, unknownStream(fl|f.fl&contentFlags))
	}
	if len(files) == 1 && !hasMarker(files[0].s) {
		out.file = files[0].s
	}
	c.setOut(out)
}

// passThrough is for filters whose exact output does not matter here
// (head, sort …): the input's text and origin flow on.
func passThrough(c *call, l Level, rule string) {
	c.add(l, rule, c.name)
	files := getopt(c.args(), "nNcCkKtoOsSfFdDeEmMwWbBgGiIrRTuzZ", nil, true).pos
	if len(files) > 0 && metadataOnly[c.name] {
		c.setOut(unknownStream(0))
		return
	}
	if len(files) > 0 {
		var fl fflags
		for _, f := range files {
			fl |= c.a.readTarget(c.sc, f)
		}
		c.setOut(unknownStream(fl))
		return
	}
	out := c.in
	out.piped = true
	c.setOut(out)
}

func hBase64(c *call) {
	p := getopt(c.args(), "w", []string{"--wrap"}, true)
	decode := p.has("-d", "--decode", "-D")
	in, ok := c.inputText(p.pos)
	c.add(Safe, "R15 read-only", c.name)
	if !decode {
		if ok {
			enc := base64.StdEncoding
			if c.name == "base32" {
				c.setOut(textStream(base32.StdEncoding.EncodeToString([]byte(in.text))+"\n", in.flags))
				return
			}
			c.setOut(textStream(enc.EncodeToString([]byte(in.text))+"\n", in.flags))
			return
		}
		c.setOut(unknownStream(in.flags))
		return
	}
	if !ok {
		c.setOut(unknownStream(in.flags | fDecoded))
		return
	}
	clean := strings.Join(strings.Fields(in.text), "")
	var dec []byte
	var err error
	if c.name == "base32" {
		dec, err = base32.StdEncoding.DecodeString(clean)
	} else {
		dec, err = decodeBase64(clean)
	}
	if err != nil {
		c.setOut(unknownStream(in.flags | fDecoded))
		return
	}
	c.setOut(textStream(string(dec), in.flags|fDecoded))
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if b, err := base64.RawStdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawURLEncoding.DecodeString(s)
}

// inputText is the text a filter reads: its stdin, or an fd stream.
func (c *call) inputText(files []field) (stream, bool) {
	if len(files) > 0 {
		if s, ok := c.a.fdStreams[files[0].s]; ok {
			return s, s.known()
		}
		fl := c.a.readTarget(c.sc, files[0])
		return unknownStream(fl), false
	}
	if !c.in.piped {
		return unknownStream(0), false
	}
	return c.in, c.in.known()
}

func hXxd(c *call) {
	p := getopt(c.args(), "cgloOsn", nil, true)
	c.add(Safe, "R15 read-only", "xxd")
	if len(p.pos) >= 2 {
		c.a.write(c.sc, p.pos[1], truncateWrite, stream{}, "xxd")
	}
	in, ok := c.inputText(p.pos)
	if !p.has("-r", "--revert") {
		c.setOut(unknownStream(in.flags))
		return
	}
	if ok && p.has("-p", "-ps", "--plain") {
		if dec, err := hex.DecodeString(strings.Join(strings.Fields(in.text), "")); err == nil {
			c.setOut(textStream(string(dec), in.flags|fDecoded))
			return
		}
	}
	c.setOut(unknownStream(in.flags | fDecoded))
}

func hRev(c *call) {
	c.add(Safe, "R15 read-only", "rev")
	in, ok := c.inputText(getopt(c.args(), "", nil, true).pos)
	if !ok {
		c.setOut(unknownStream(in.flags | fDecoded))
		return
	}
	lines := strings.Split(in.text, "\n")
	for i, l := range lines {
		r := []rune(l)
		slices.Reverse(r)
		lines[i] = string(r)
	}
	c.setOut(textStream(strings.Join(lines, "\n"), in.flags|fDecoded))
}

func hTr(c *call) {
	c.add(Safe, "R15 read-only", "tr")
	p := getopt(c.args(), "", nil, true)
	in, ok := c.inputText(nil)
	if !ok || len(p.pos) == 0 || p.has("-c", "-C", "--complement") {
		c.setOut(unknownStream(in.flags | fDecoded))
		return
	}
	set1 := trSet(p.pos[0].s)
	var out string
	switch {
	case p.has("-d", "--delete"):
		out = strings.Map(func(r rune) rune {
			if slices.Contains(set1, r) {
				return -1
			}
			return r
		}, in.text)
	case len(p.pos) >= 2:
		set2 := trSet(p.pos[1].s)
		if len(set2) == 0 {
			c.setOut(unknownStream(in.flags | fDecoded))
			return
		}
		out = strings.Map(func(r rune) rune {
			if i := slices.Index(set1, r); i >= 0 {
				if i >= len(set2) {
					return set2[len(set2)-1]
				}
				return set2[i]
			}
			return r
		}, in.text)
	default:
		out = in.text
	}
	c.setOut(textStream(out, in.flags|fDecoded))
}

// trSet expands a tr set: ranges, [:classes:] and common escapes.
func trSet(s string) []rune {
	classes := map[string]string{"[:lower:]": "a-z", "[:upper:]": "A-Z", "[:digit:]": "0-9", "[:alpha:]": "a-zA-Z", "[:alnum:]": "a-zA-Z0-9", "[:space:]": " \t\n"}
	for k, v := range classes {
		s = strings.ReplaceAll(s, k, v)
	}
	s = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(s)
	r := []rune(s)
	var out []rune
	for i := 0; i < len(r); i++ {
		if i+2 < len(r) && r[i+1] == '-' && r[i] <= r[i+2] && r[i+2]-r[i] < 512 {
			for x := r[i]; x <= r[i+2]; x++ {
				out = append(out, x)
			}
			i += 2
			continue
		}
		out = append(out, r[i])
	}
	return out
}

func hTee(c *call) {
	p := getopt(c.args(), "", nil, true)
	mode := truncateWrite
	if p.has("-a", "--append") {
		mode = appendWrite
	}
	c.add(Safe, "R15 read-only", "tee to stdout")
	for _, f := range p.pos {
		c.a.write(c.sc, f, mode, c.in, "tee")
	}
	out := c.in
	out.piped = true
	c.setOut(out)
}

// hWhich answers lookups such as `which rm` with a path, so `$(which rm)` resolves (R3).
func hWhich(c *call) {
	c.add(Safe, "R15 read-only", c.name)
	var b strings.Builder
	for _, f := range getopt(c.args(), "", nil, true).pos {
		b.WriteString("/usr/bin/" + baseName(f.s) + "\n")
	}
	c.setOut(textStream(b.String(), 0))
}

func hType(c *call) {
	c.add(Safe, "R15 read-only", "type")
	p := getopt(c.args(), "", nil, true)
	var b strings.Builder
	for _, f := range p.pos {
		if p.has("-P", "-p") {
			b.WriteString("/usr/bin/" + f.s + "\n")
		} else if p.has("-t") {
			b.WriteString("file\n")
		} else {
			b.WriteString(f.s + " is /usr/bin/" + f.s + "\n")
		}
	}
	c.setOut(textStream(b.String(), 0))
}

func hBasename(c *call) {
	c.add(Safe, "R15 read-only", c.name)
	p := getopt(c.args(), "s", []string{"--suffix"}, true)
	var b strings.Builder
	for _, f := range p.pos {
		if c.name == "dirname" {
			b.WriteString(path.Dir(f.s) + "\n")
		} else {
			b.WriteString(path.Base(f.s) + "\n")
			if !p.has("-a", "--multiple", "-s", "--suffix") {
				break
			}
		}
	}
	c.setOut(textStream(b.String(), 0))
}

// sedTransform applies a single s/re/repl/flags script to known text.
func sedTransform(script, text string) (string, bool) {
	if len(script) < 4 || script[0] != 's' {
		return "", false
	}
	d := script[1:2]
	parts := strings.Split(script[2:], d)
	if len(parts) != 3 {
		return "", false
	}
	re, err := regexp.Compile(parts[0])
	if err != nil {
		return "", false
	}
	repl := strings.ReplaceAll(parts[1], "&", "${0}")
	if strings.Contains(parts[2], "g") {
		return re.ReplaceAllString(text, repl), true
	}
	var out []string
	for _, line := range strings.Split(text, "\n") {
		done := false
		out = append(out, re.ReplaceAllStringFunc(line, func(m string) string {
			if done {
				return m
			}
			done = true
			return re.ReplaceAllString(m, repl)
		}))
	}
	return strings.Join(out, "\n"), true
}

// hPwd prints the working directory when the line made it known (R18):
// `$(cd ~ && pwd)` names the home directory.
func hPwd(c *call) {
	c.add(Safe, "R15 read-only", "pwd")
	if len(c.sc.cwd) == 1 && strings.HasPrefix(c.sc.cwd[0], "/") {
		c.setOut(textStream(c.sc.cwd[0]+"\n", 0))
	}
}

// hRealpath prints the paths it is given, resolved lexically (symlinks are
// not known; /proc/self/exe is the shell): `$(realpath ~)` is the home
// directory.
func hRealpath(c *call) {
	c.add(Safe, "R15 read-only", c.name)
	var b strings.Builder
	for _, f := range getopt(c.args(), "", []string{"--relative-to", "--relative-base"}, true).pos {
		switch {
		case isSelfExe(f.s):
			b.WriteString("/bin/bash\n")
		case c.name == "readlink" && !hasArg(c.args(), "-f", "-e", "-m", "--canonicalize", "--canonicalize-existing", "--canonicalize-missing"):
			// A plain readlink prints the link's target, which is not known.
			c.setOut(unknownStream(0))
			return
		default:
			ps := c.sc.resolvePath(f.s)
			if len(ps) != 1 || !strings.HasPrefix(ps[0], "/") || hasMarker(ps[0]) {
				c.setOut(unknownStream(0))
				return
			}
			b.WriteString(ps[0] + "\n")
		}
	}
	c.setOut(textStream(b.String(), 0))
}

// isSelfExe reports the shell's own executable under /proc.
func isSelfExe(s string) bool {
	rest, ok := strings.CutPrefix(path.Clean(s), "/proc/")
	if !ok {
		return false
	}
	pid, exe, ok := strings.Cut(rest, "/")
	return ok && exe == "exe" && isSelfPid(pid)
}
