package risk

import (
	"path"
	"regexp"
	"strconv"
	"strings"
)

func registerFileHandlers(reg func(func(*call), ...string)) {
	reg(hRm, "rm")
	reg(hUnlink, "unlink")
	reg(hShred, "shred", "srm", "wipe")
	reg(hRmdir, "rmdir")
	reg(hCopy, "cp", "install")
	reg(hMove, "mv")
	reg(hLn, "ln")
	reg(hChmod, "chmod", "chown", "chgrp")
	reg(hCreate, "mkdir", "touch", "mkfifo", "mknod")
	reg(hTruncate, "truncate", "fallocate")
	reg(hDd, "dd")
	reg(hSortCmd, "sort")
	reg(hUniq, "uniq")
	reg(hSed, "sed", "gsed")
	reg(hAwk, "awk", "gawk", "mawk", "nawk")
	reg(hFind, "find")
	reg(hTar, "tar", "bsdtar")
	reg(hUnzip, "unzip")
	reg(hZip, "zip")
	reg(hCompress, "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "pigz")
	reg(hDisk, "mkfs", "mke2fs", "mkswap", "wipefs", "parted", "fdisk", "sfdisk", "gdisk", "sgdisk", "cfdisk",
		"blkdiscard", "hdparm", "badblocks", "pvcreate", "vgcreate", "lvremove", "vgremove", "pvremove", "mdadm", "zpool",
		"partprobe", "dumpe2fs", "debugfs")
	reg(hEditor, "vi", "vim", "nvim", "view", "nano", "pico", "emacs", "micro", "joe", "mcedit", "hx", "helix", "kak", "ne", "code", "subl")
	reg(hSplit, "split", "csplit")
	reg(hFormatter, "gofmt", "goimports", "shfmt", "rustfmt", "black", "prettier", "ruff")
	for _, fs := range []string{"ext2", "ext3", "ext4", "xfs", "btrfs", "vfat", "fat", "ntfs", "exfat", "f2fs", "minix", "msdos", "bfs", "cramfs", "jfs", "reiserfs"} {
		reg(hDisk, "mkfs."+fs)
	}
}

func hRm(c *call) {
	p := getopt(c.args(), "", nil, true)
	recursive := p.has("-r", "-R", "--recursive")
	force := p.has("-f", "--force")
	via := "rm"
	if recursive || force {
		via += " -"
		if recursive {
			via += "r"
		}
		if force {
			via += "f"
		}
	}
	if p.has("--no-preserve-root") {
		c.add(Dangerous, "R10 destructive", "rm --no-preserve-root")
	}
	if len(p.pos) == 0 {
		if recursive || force {
			c.add(Dangerous, "R10 destructive", via+" with targets known only at run time")
		} else {
			c.add(High, "R13 delete", "rm")
		}
		return
	}
	mode := plainDelete
	switch {
	case recursive:
		mode = recursiveDelete
	case force:
		mode = forcedDelete
	}
	found := Safe
	for _, t := range p.pos {
		found = max(found, c.a.destroy(c.sc, t, mode, via))
	}
	if mode == forcedDelete && found < Dangerous {
		// The targets named nothing (empty words), but rm -f is still R10.
		c.add(Dangerous, "R10 destructive", via)
	}
}

func hUnlink(c *call) {
	found := Safe
	for _, t := range getopt(c.args(), "", nil, true).pos {
		found = max(found, c.a.destroy(c.sc, t, plainDelete, "unlink"))
	}
	// No target, or only empty words: the command itself is the reason.
	if found < High {
		c.add(High, "R13 delete", "unlink")
	}
}

func hShred(c *call) {
	p := getopt(c.args(), "nsx", []string{"--iterations", "--size", "--random-source"}, true)
	if len(p.pos) == 0 {
		c.add(Dangerous, "R10 destructive", c.name)
	}
	for _, t := range p.pos {
		c.a.destroy(c.sc, t, recursiveDelete, c.name)
		for _, r := range c.sc.resolvePath(t.s) {
			if classifyDevice(r) == otherDisk {
				c.add(Dangerous, "R10 block device", c.name+" "+r)
			}
		}
	}
}

func hRmdir(c *call) {
	c.add(Moderate, "R14 workspace change", "rmdir")
	for _, t := range getopt(c.args(), "", nil, true).pos {
		if own, ok := c.a.ownTarget(c.sc, t.s, false); ok {
			c.a.addOwn(Forbidden, ownRule, "rmdir of "+own)
		}
		for _, r := range c.sc.resolvePath(stripMarkers(t.s)) {
			if isSystemPath(r) {
				c.add(High, "R13 system write", "rmdir "+r)
			}
		}
	}
}

// destination splits cp/mv/install operands into sources and the destination.
func destination(p parsed) ([]field, *field) {
	if t, ok := p.val("-t", "--target-directory"); ok {
		return p.pos, &t
	}
	if len(p.pos) < 2 {
		return p.pos, nil
	}
	d := p.pos[len(p.pos)-1]
	return p.pos[:len(p.pos)-1], &d
}

func hCopy(c *call) {
	p := getopt(c.args(), "tSmogb", []string{"--target-directory", "--suffix", "--mode", "--owner", "--group", "--backup", "--reflink", "--sparse", "--preserve"}, true)
	srcs, dst := destination(p)
	var content stream
	secretReads := c.a.secretReads
	for _, s := range srcs {
		if fl := c.a.readTarget(c.sc, s); fl&fSecret != 0 {
			content.flags |= fSecret
		}
		if st, ok := c.a.fdStreams[s.s]; ok {
			content = st
		}
		if c.a.isDownloaded(c.sc, s.s) && dst != nil {
			c.a.markDownloaded(c.sc, dst.s)
		}
		if dst != nil && isShellPath(s.s) {
			if c.a.shellCopies == nil {
				c.a.shellCopies = map[string]bool{}
			}
			for _, d := range c.sc.resolvePath(dst.s) {
				c.a.shellCopies[d] = true
			}
		}
	}
	found := Safe
	if dst != nil {
		found = c.a.write(c.sc, *dst, truncateWrite, content, c.name)
		if len(srcs) == 1 {
			for _, d := range c.sc.resolvePath(dst.s) {
				// cp onto a directory lands inside it.
				if d == "/etc" || d == "/boot" {
					c.a.writePath(c.sc, path.Join(d, path.Base(srcs[0].s)), truncateWrite, content, c.name)
				}
			}
		}
	}
	c.workspaceChange(found, c.name)
	c.secret = false // reading a secret into a copy is not showing it
	// A secret source read here is already a reason that names it.
	if content.flags&fSecret != 0 && c.a.secretReads == secretReads {
		c.add(High, "R13 secret", c.name+" copies secret material")
	}
}

func hMove(c *call) {
	p := getopt(c.args(), "tS", []string{"--target-directory", "--suffix", "--backup"}, true)
	srcs, dst := destination(p)
	for _, s := range srcs {
		if own, ok := c.a.ownTarget(c.sc, s.s, true); ok {
			c.a.addOwn(Forbidden, ownRule, "mv moves away "+own)
		}
		for _, form := range targetForms(s.s) {
			for _, r := range c.sc.resolvePath(form) {
				switch {
				case hasMarker(r):
				case isCritical(r) || isCriticalFile(r):
					c.add(Forbidden, "R9a critical path", "mv moves away "+r)
				case isSystemPath(r):
					c.add(High, "R13 system write", "mv moves "+r)
				}
			}
		}
		if c.a.isDownloaded(c.sc, s.s) && dst != nil {
			c.a.markDownloaded(c.sc, dst.s)
		}
	}
	found := Safe
	if dst != nil {
		found = c.a.write(c.sc, *dst, truncateWrite, stream{}, "mv")
	}
	c.workspaceChange(found, "mv")
	c.secret = false
}

func hLn(c *call) {
	p := getopt(c.args(), "tS", []string{"--target-directory", "--suffix"}, true)
	srcs, dst := destination(p)
	for _, s := range srcs {
		// A link is a second name for the file that later commands can read
		// or write through without naming it.
		if own, ok := c.a.ownTarget(c.sc, s.s, true); ok {
			c.a.addOwn(Forbidden, ownRule, "ln links to "+own)
		}
	}
	found := Safe
	if dst != nil && (p.has("-f", "--force") || !strings.HasSuffix(dst.s, "/")) {
		found = c.a.write(c.sc, *dst, truncateWrite, stream{}, "ln")
	}
	c.workspaceChange(found, "ln")
	c.secret = false
}

// isLoosening reports a chmod mode that opens a critical file to other
// users: write for anyone but the owner, or read of a secret file.
func isLoosening(mode, file string) bool {
	secretFile := strings.Contains(file, "shadow") || strings.Contains(file, "sudoers")
	if isDigits(mode) && len(mode) >= 3 {
		g, o := mode[len(mode)-2]-'0', mode[len(mode)-1]-'0'
		return o&2 != 0 || g&2 != 0 || (secretFile && o&4 != 0)
	}
	for _, clause := range strings.Split(mode, ",") {
		i := strings.IndexAny(clause, "+=")
		if i < 0 {
			continue
		}
		who, perms := clause[:i], clause[i+1:]
		others := who == "" || strings.ContainsAny(who, "goa")
		if others && (strings.Contains(perms, "w") || (secretFile && strings.Contains(perms, "r"))) {
			return true
		}
	}
	return false
}

func hChmod(c *call) {
	p := getopt(c.args(), "", []string{"--reference", "--from"}, true)
	recursive := p.has("-R", "--recursive")
	pos := p.pos
	mode := ""
	if c.name == "chmod" {
		// Modes such as -w or -x look like options.
		for _, o := range p.opts {
			if len(o.name) == 2 && strings.ContainsAny(o.name[1:], "rwxXst") && !o.has {
				mode = "-" + o.name[1:]
			}
		}
		if mode == "" && len(pos) > 0 && !p.has("--reference") {
			mode, pos = pos[0].s, pos[1:]
		}
	} else if len(pos) > 0 && !p.has("--reference") {
		mode, pos = pos[0].s, pos[1:]
	}
	c.add(Moderate, "R14 workspace change", c.name)
	setuid := c.name == "chmod" && isSetuidMode(mode)
	for _, t := range pos {
		if own, ok := c.a.ownTarget(c.sc, t.s, recursive); ok {
			c.a.addOwn(Forbidden, ownRule, c.name+" on "+own)
		}
		for _, form := range targetForms(t.s) {
			for _, r := range c.sc.resolvePath(form) {
				if hasMarker(r) {
					if recursive {
						c.add(High, "R13 system write", c.name+" -R on a path known only at run time")
					}
					continue
				}
				empty := form != t.s
				switch {
				case recursive && isCritical(r):
					rule := "R9a critical path"
					if empty {
						rule = "R17 empty expansion"
					}
					c.add(Forbidden, rule, c.name+" -R on "+r)
				case setuid && (isShellPath(r) || c.a.shellCopies[r]):
					c.add(Forbidden, "R9g privilege backdoor", "setuid bit on shell "+r)
				case isCriticalFile(r) && c.name == "chmod" && isLoosening(mode, r):
					c.add(Forbidden, "R9g privilege backdoor", "loosens permissions on "+r)
				case isCriticalFile(r) && c.name != "chmod" && !strings.HasPrefix(mode, "root"):
					c.add(Forbidden, "R9g privilege backdoor", "hands "+r+" to "+mode)
				case setuid:
					c.add(High, "R13 system write", "setuid bit on "+r)
				case isSystemPath(r) || isCritical(r):
					c.add(High, "R13 system write", c.name+" on "+r)
				}
			}
		}
	}
	c.secret = false
}

func isSetuidMode(m string) bool {
	if strings.ContainsAny(m, "s") && strings.ContainsAny(m, "+=") {
		return true
	}
	if isDigits(m) && len(m) == 4 {
		return m[0] == '4' || m[0] == '6' || m[0] == '2'
	}
	return false
}

func isShellPath(p string) bool {
	switch path.Base(p) {
	case "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "fish", "tcsh", "csh", "busybox", "python", "python3", "perl", "env", "find", "vim", "less":
		return true
	}
	return false
}

func hCreate(c *call) {
	p := getopt(c.args(), "mdrtZ", []string{"--mode", "--date", "--reference", "--context"}, true)
	if c.name == "mknod" && len(p.pos) > 0 {
		c.add(High, "R13 system write", "mknod")
		return
	}
	found := Safe
	for _, t := range p.pos {
		found = max(found, c.a.write(c.sc, t, appendWrite, stream{}, c.name))
	}
	c.workspaceChange(found, c.name)
}

func hTruncate(c *call) {
	p := getopt(c.args(), "srol", []string{"--size", "--reference", "--offset", "--length"}, true)
	found := Safe
	for _, t := range p.pos {
		found = max(found, c.a.write(c.sc, t, truncateWrite, stream{}, c.name))
	}
	c.workspaceChange(found, c.name)
}

func hDd(c *call) {
	var in, out *field
	bounded := false
	for _, a := range c.args() {
		k, v, ok := strings.Cut(a.s, "=")
		if !ok {
			continue
		}
		f := field{s: v, fl: a.fl}
		switch k {
		case "if":
			in = &f
		case "of":
			out = &f
		case "count":
			bounded = true
		}
	}
	var content stream
	if in != nil {
		content.flags = c.a.readTarget(c.sc, *in)
		if s, ok := c.a.fdStreams[in.s]; ok {
			content = s
		}
	} else {
		content = c.in
	}
	if out == nil {
		c.workspaceChange(Safe, "dd")
		c.setOut(unknownStream(content.flags))
		return
	}
	c.workspaceChange(c.a.write(c.sc, *out, truncateWrite, content, "dd"), "dd")
	if !bounded && in != nil {
		for _, r := range c.sc.resolvePath(in.s) {
			if r == "/dev/zero" || r == "/dev/urandom" || r == "/dev/random" {
				c.add(High, "R13 system write", "dd without count= fills the disk")
			}
		}
	}
	c.secret = false
}

func hSortCmd(c *call) {
	p := getopt(c.args(), "ktoSTz", []string{"--key", "--field-separator", "--output", "--buffer-size", "--temporary-directory", "--compress-program", "--files0-from", "--parallel"}, true)
	if o, ok := p.val("-o", "--output"); ok {
		c.a.write(c.sc, o, truncateWrite, c.in, "sort -o")
	}
	if prog, ok := p.val("--compress-program"); ok {
		c.run([]field{prog})
	}
	passThrough(c, Safe, "R15 read-only")
}

func hUniq(c *call) {
	p := getopt(c.args(), "fsw", []string{"--skip-fields", "--skip-chars", "--check-chars", "--group", "--all-repeated"}, true)
	if len(p.pos) >= 2 {
		c.a.write(c.sc, p.pos[1], truncateWrite, c.in, "uniq")
	}
	passThrough(c, Safe, "R15 read-only")
}

// sedOp is one effectful sed command: a write (w, s///w), an exec (e,
// s///e) or a read (r).
type sedOp struct {
	kind byte // 'w', 'e', 'E' (s///e, command from the pattern space), 'r'
	arg  string
}

// sedOps scans a sed script for commands with effects beyond stdout.
func sedOps(script string) []sedOp {
	var ops []sedOp
	s := script
	i := 0
	restOfLine := func() string {
		j := i
		for j < len(s) && s[j] != '\n' {
			j++
		}
		out := strings.TrimSpace(s[i:j])
		i = j
		return out
	}
	skipDelimited := func(n int) bool {
		if i >= len(s) {
			return false
		}
		d := s[i]
		i++
		for k := 0; k < n; k++ {
			for i < len(s) && s[i] != d {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(s) {
				return false
			}
			i++
		}
		return true
	}
	for steps := 0; i < len(s) && steps < 1000; steps++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' || ch == '{' || ch == '}' || ch == '!' || ch == ',':
			i++
		case ch >= '0' && ch <= '9' || ch == '$' || ch == '~':
			i++
		case ch == '/' || ch == '\\':
			if ch == '\\' {
				i++
			}
			skipDelimited(1)
		case ch == 's':
			i++
			from := i
			if !skipDelimited(2) {
				return ops
			}
			repl := sedReplacement(s[from:i])
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				switch s[i] {
				case 'e':
					ops = append(ops, sedOp{kind: 'E', arg: repl})
				case 'w':
					i++
					ops = append(ops, sedOp{kind: 'w', arg: restOfLine()})
					continue
				}
				i++
			}
		case ch == 'y':
			i++
			skipDelimited(2)
		case ch == 'w' || ch == 'W' || ch == 'e' || ch == 'r' || ch == 'R':
			i++
			arg := restOfLine()
			kind := ch
			if ch == 'W' {
				kind = 'w'
			}
			if ch == 'R' {
				kind = 'r'
			}
			if ch == 'e' && arg == "" {
				kind = 'E'
			}
			ops = append(ops, sedOp{kind: kind, arg: arg})
		case ch == 'a' || ch == 'i' || ch == 'c' || ch == ':' || ch == 'b' || ch == 't' || ch == 'T' || ch == '#':
			i++
			restOfLine()
		default:
			i++
		}
	}
	return ops
}

func hSed(c *call) {
	p := getopt(c.args(), "efl", []string{"--expression", "--file", "--line-length"}, true)
	scripts := p.vals("-e", "--expression")
	files := p.pos
	if len(scripts) == 0 && !p.has("-f", "--file") && len(files) > 0 {
		scripts, files = files[:1], files[1:]
	}
	inPlace := p.has("-i", "--in-place")
	for _, o := range p.opts {
		if strings.HasPrefix(o.name, "--in-place") {
			inPlace = true
		}
	}
	level := Safe
	for _, s := range scripts {
		for _, op := range sedOps(s.s) {
			switch op.kind {
			case 'w':
				c.a.write(c.sc, field{s: op.arg, fl: s.fl}, truncateWrite, c.in, "sed w")
			case 'e':
				c.script(op.arg, s.fl, "sed e command")
			case 'E':
				c.add(High, "R5 hidden command", "sed e runs the pattern space as a command")
				if op.arg != "" {
					// What the substitution puts in runs: the known part of it.
					c.script(op.arg, s.fl, "sed s///e")
				}
			case 'r':
				c.a.readTarget(c.sc, field{s: op.arg})
			}
		}
	}
	if inPlace {
		level = Moderate
		for _, f := range files {
			c.a.write(c.sc, f, modifyWrite, stream{}, "sed -i")
		}
	}
	if level == Safe {
		c.add(Safe, "R15 read-only", "sed printing to stdout")
	}
	in, ok := c.inputText(files)
	if ok && len(scripts) == 1 && !inPlace {
		if out, ok := sedTransform(scripts[0].s, in.text); ok {
			c.setOut(textStream(out, in.flags|fDecoded))
			return
		}
	}
	c.setOut(unknownStream(in.flags | fDecoded))
}

var (
	rxAwkSystem = regexp.MustCompile(`system\s*\(\s*"((?:\\.|[^"\\])*)"`)
	rxAwkPipeTo = regexp.MustCompile(`\|\s*"((?:\\.|[^"\\])*)"`)
	rxAwkPipeIn = regexp.MustCompile(`"((?:\\.|[^"\\])*)"\s*\|\s*getline`)
	rxAwkWrite  = regexp.MustCompile(`(?:print|printf)[^;}]*?(>>?)\s*"((?:\\.|[^"\\])*)"`)
)

func hAwk(c *call) {
	p := getopt(c.args(), "Ffvil", []string{"--field-separator", "--file", "--assign", "--include", "--source", "--load"}, true)
	prog := field{}
	files := p.pos
	if src := p.vals("--source"); len(src) > 0 {
		prog = src[0]
	} else if !p.has("-f", "--file") && len(files) > 0 {
		prog, files = files[0], files[1:]
	}
	inc, _ := p.val("-i", "--include")
	if inc.s == "inplace" {
		for _, f := range files {
			c.a.write(c.sc, f, modifyWrite, stream{}, "awk -i inplace")
		}
	}
	if p.has("-f", "--file") {
		c.add(Moderate, "R14 project script", c.name+" -f")
	}
	text := prog.s
	found := false
	if p.has("-l", "--load") || rxGawkLoad.MatchString(text) {
		c.add(High, "R13 loads a library", c.name+" loads an extension, which runs its code")
	}
	fed := map[string]bool{}
	for _, m := range rxAwkPrintPipe.FindAllStringSubmatch(text, -1) {
		// print "text" | "sh": the command reads known text.
		found = true
		fed[m[2]] = true
		c.a.scriptIn(c.sc, unescapeC(m[2]), prog.fl, "awk pipe", textStream(unescapeC(m[1])+"\n", 0), nil, false)
	}
	for _, m := range rxAwkSystem.FindAllStringSubmatch(text, -1) {
		found = true
		c.script(unescapeC(m[1]), prog.fl, "awk system()")
	}
	for _, m := range rxAwkPipeTo.FindAllStringSubmatch(text, -1) {
		found = true
		if fed[m[1]] {
			continue
		}
		// The command reads what awk prints: data, not a known script.
		c.a.scriptIn(c.sc, unescapeC(m[1]), prog.fl, "awk pipe", unknownStream(0), nil, false)
	}
	for _, m := range rxAwkPipeIn.FindAllStringSubmatch(text, -1) {
		found = true
		c.script(unescapeC(m[1]), prog.fl, "awk getline")
	}
	if strings.Contains(text, "/inet/") {
		c.a.events |= evNetSocket
		c.add(High, "R11 network", c.name+" opens a socket")
		if strings.Contains(text, "|&") && (found || strings.Contains(text, "sh") || strings.Count(text, "|&") >= 2) {
			c.add(Forbidden, "R9f reverse shell", c.name+" joins a socket to a shell")
		}
	}
	if strings.Contains(text, "system(") && !found {
		c.add(High, "R3 dynamic command", "awk system() with a computed command")
	}
	for _, m := range rxAwkWrite.FindAllStringSubmatch(text, -1) {
		mode := truncateWrite
		if m[1] == ">>" {
			mode = appendWrite
		}
		c.a.write(c.sc, field{s: m[2]}, mode, stream{}, "awk >")
	}
	c.add(Safe, "R15 read-only", c.name+" printing to stdout")
	in, _ := c.inputText(files)
	c.setOut(unknownStream(in.flags))
}

// unescapeC undoes the backslash escapes of a C-like string literal.
func unescapeC(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	if u, err := strconv.Unquote(`"` + s + `"`); err == nil {
		return u
	}
	return strings.ReplaceAll(s, `\"`, `"`)
}

func hFind(c *call) {
	args := c.args()
	// Leading options (-H -L -P -O3 -D x) come before the start paths.
	i := 0
	for i < len(args) && (args[i].s == "-H" || args[i].s == "-L" || args[i].s == "-P" || strings.HasPrefix(args[i].s, "-O")) {
		i++
	}
	if i < len(args) && args[i].s == "-D" {
		i += 2
	}
	var starts []field
	for ; i < len(args); i++ {
		s := args[i].s
		if strings.HasPrefix(s, "-") || s == "(" || s == "!" || s == "," || s == ")" {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []field{lit(".")}
	}
	c.add(Safe, "R15 read-only", "find")
	// What -name or -path selects by a secret file's name is secret
	// material: find -name id_rsa -exec curl -T {} … uploads it.
	var found fflags
	for j := i; j+1 < len(args); j++ {
		switch args[j].s {
		case "-name", "-iname", "-path", "-ipath", "-wholename":
			if isSecretName(args[j+1].s) {
				found |= fSecret
			}
		}
	}
	c.out.flags |= found
	for k := range starts {
		starts[k].fl |= found
	}
	for ; i < len(args); i++ {
		switch args[i].s {
		case "-delete":
			for _, s := range starts {
				c.a.destroy(c.sc, s, recursiveDelete, "find -delete")
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].s != ";" && args[j].s != "+" {
				j++
			}
			inner := args[i+1 : j]
			if len(inner) > 0 && (strings.Contains(inner[0].s, "{}") || runsFoundScript(inner)) {
				c.a.events |= evUnknownExec
				c.add(High, "R3 dynamic command", "find "+args[i].s+" runs the files it finds")
			}
			if len(inner) > 0 {
				for _, s := range starts {
					if _, ok := c.a.ownTarget(c.sc, s.s, true); ok {
						// What it finds there may be one of the daemon's files.
						s.fl |= fOwnTree
					}
					c.run(replaceBraces(inner, "{}", s))
				}
			}
			i = j
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				c.a.write(c.sc, args[i+1], truncateWrite, stream{}, "find "+args[i].s)
				i++
			}
		}
	}
	c.secret = false
}

// replaceBraces substitutes each occurrence of token in args with val.
func replaceBraces(args []field, token string, val field) []field {
	out := make([]field, len(args))
	for i, a := range args {
		if strings.Contains(a.s, token) {
			out[i] = field{s: strings.ReplaceAll(a.s, token, val.s), fl: a.fl | val.fl}
		} else {
			out[i] = a
		}
	}
	return out
}

func hTar(c *call) {
	args := c.args()
	// Old-style first argument without a dash: tar xzf file.
	if len(args) > 0 && !strings.HasPrefix(args[0].s, "-") && strings.Trim(args[0].s, "AcdrtuxfvzjJpPkmOSWhlCgGZa") == "" {
		args = append([]field{{s: "-" + args[0].s, fl: args[0].fl}}, args[1:]...)
	}
	p := getopt(args, "fCbTXIFgLVHN", []string{"--file", "--directory", "--files-from", "--exclude-from", "--use-compress-program",
		"--to-command", "--checkpoint-action", "--info-script", "--new-volume-script", "--rsh-command", "--transform", "--owner", "--group", "--mode"}, true)
	create := p.has("-c", "--create", "-r", "--append", "-u", "--update")
	extract := p.has("-x", "--extract", "--get")
	for _, prog := range p.vals("-I", "--use-compress-program", "--rsh-command") {
		c.run(splitWords(prog))
	}
	for _, cmd := range p.vals("--to-command", "-F", "--info-script", "--new-volume-script") {
		c.script(cmd.s, cmd.fl, "tar hook")
	}
	for _, act := range p.vals("--checkpoint-action") {
		if v, ok := strings.CutPrefix(act.s, "exec="); ok {
			c.script(v, act.fl, "tar --checkpoint-action")
		}
	}
	switch {
	case extract:
		c.add(Moderate, "R14 workspace change", "tar extract")
		if d, ok := p.val("-C", "--directory"); ok {
			if own, ok := c.a.ownTarget(c.sc, d.s, false); ok {
				c.a.addOwn(Forbidden, ownRule, "extracts an archive into "+own)
			}
			for _, r := range c.sc.resolvePath(d.s) {
				if isSystemPath(r) || r == "/" {
					c.add(High, "R13 system write", "extracts an archive into "+r)
				}
			}
		}
	case create:
		if f, ok := p.val("-f", "--file"); ok && f.s != "-" {
			c.workspaceChange(c.a.write(c.sc, f, truncateWrite, stream{}, "tar create"), "tar create")
		} else {
			c.workspaceChange(Safe, "tar create")
			fl := fflags(0)
			for _, src := range p.pos {
				fl |= c.a.readTarget(c.sc, src)
			}
			c.setOut(unknownStream(fl))
		}
	default:
		c.add(Safe, "R15 read-only", "tar list")
	}
	c.secret = false
}

func splitWords(f field) []field {
	var out []field
	for _, w := range strings.Fields(f.s) {
		out = append(out, field{s: w, fl: f.fl})
	}
	return out
}

func hUnzip(c *call) {
	p := getopt(c.args(), "dxP", nil, true)
	if p.has("-l", "-v", "-t", "-Z") {
		c.add(Safe, "R15 read-only", "unzip list")
		return
	}
	found := Safe
	if d, ok := p.val("-d"); ok {
		found = c.a.write(c.sc, d, appendWrite, stream{}, "unzip -d")
	}
	c.workspaceChange(found, "unzip")
}

func hZip(c *call) {
	p := getopt(c.args(), "bdnPtxiO", []string{"--unzip-command", "--temp-path", "--password", "--output-file"}, true)
	for _, cmd := range p.vals("-TT", "--unzip-command") {
		c.script(cmd.s, cmd.fl, "zip --unzip-command")
	}
	// getopt splits -TT into -T -T; the value is then the next operand.
	for i, a := range c.args() {
		if a.s == "-TT" && i+1 < len(c.args()) {
			c.script(c.args()[i+1].s, c.args()[i+1].fl, "zip -TT")
		}
	}
	found := Safe
	if len(p.pos) > 0 {
		found = c.a.write(c.sc, p.pos[0], appendWrite, stream{}, "zip")
	}
	c.workspaceChange(found, "zip")
	c.secret = false
}

func hCompress(c *call) {
	p := getopt(c.args(), "SbLlTo", []string{"--suffix"}, true)
	if p.has("-l", "--list", "-t", "--test", "-h", "--help", "-V", "--version") {
		c.add(Safe, "R15 read-only", c.name)
		return
	}
	if p.has("-c", "--stdout", "--to-stdout") || len(p.pos) == 0 {
		c.add(Safe, "R15 read-only", c.name+" to stdout")
		fl := c.in.flags
		for _, f := range p.pos {
			fl |= c.a.readTarget(c.sc, f)
		}
		c.setOut(unknownStream(fl | fDecoded))
		c.secret = false
		return
	}
	found := Safe
	for _, f := range p.pos {
		found = max(found, c.a.write(c.sc, f, modifyWrite, stream{}, c.name))
	}
	c.workspaceChange(found, c.name)
	c.secret = false
}

func hSplit(c *call) {
	c.add(Moderate, "R14 workspace change", c.name)
}

// hFormatter: code formatters print unless told to rewrite files (R14).
func hFormatter(c *call) {
	for _, a := range c.args() {
		switch a.s {
		case "-w", "--write", "-i", "--in-place", "fix", "--fix", "--unsafe-fixes":
			c.add(Moderate, "R14 workspace change", c.name+" "+a.s)
			return
		}
	}
	if (c.name == "black" || c.name == "ruff" && hasArg(c.args(), "format")) && !hasArg(c.args(), "--check", "--diff") {
		c.add(Moderate, "R14 workspace change", c.name+" rewrites files")
		return
	}
	c.add(Safe, "R15 read-only", c.name+" prints")
}

// hDisk covers partitioning, formatting and wiping tools (R9c, R10).
func hDisk(c *call) {
	args := c.args()
	readOnly := false
	switch c.name {
	case "fdisk", "sfdisk", "parted", "gdisk", "cfdisk":
		readOnly = hasArg(args, "-l", "--list", "-s", "--show-size", "-d", "--dump", "print", "-v", "--version", "-h", "--help") ||
			(c.name == "parted" && hasArg(args, "print"))
	case "sgdisk":
		readOnly = hasArg(args, "-p", "--print", "-i", "--info", "-v", "--verify")
	case "wipefs":
		readOnly = !hasArg(args, "-a", "--all", "-o", "--offset", "-f", "--force") && !hasShortFlag(args, "ao")
	case "hdparm":
		readOnly = !strings.Contains(strings.Join(argStrings(args), " "), "--security-erase") &&
			!strings.Contains(strings.Join(argStrings(args), " "), "--trim-sector") && !hasShortFlag(args, "W")
	case "badblocks":
		readOnly = !hasShortFlag(args, "wn")
	case "mdadm":
		readOnly = !hasArg(args, "--create", "-C", "--zero-superblock", "--grow")
	case "zpool":
		first, _ := firstSub(args)
		readOnly = first == "status" || first == "list" || first == "iostat" || first == "get"
	case "partprobe", "dumpe2fs", "debugfs":
		readOnly = true
	}
	if readOnly {
		c.add(Safe, "R15 read-only", c.name+" query")
		for _, a := range args {
			if strings.HasPrefix(a.s, "/dev/") {
				c.add(High, "R13 raw disk read", c.name+" "+a.s)
			}
		}
		return
	}
	sawDevice := false
	for _, a := range args {
		for _, form := range targetForms(a.s) {
			if !strings.HasPrefix(form, "/dev/") {
				continue
			}
			sawDevice = true
			switch classifyDevice(path.Clean(form)) {
			case primaryDisk:
				c.add(Forbidden, "R9c primary disk", c.name+" on "+form)
			default:
				c.add(Dangerous, "R10 block device", c.name+" on "+form)
			}
		}
		if hasMarker(a.s) && !strings.HasPrefix(a.s, "-") {
			sawDevice = true
			c.add(Dangerous, "R10 block device", c.name+" on a device known only at run time")
		}
	}
	if !sawDevice {
		c.add(Dangerous, "R10 block device", c.name)
	}
}

// hEditor opens files for editing (R14) and runs any shell escape given on
// the command line (R5).
func hEditor(c *call) {
	args := c.args()
	found := Safe
	for i := 0; i < len(args); i++ {
		s := args[i].s
		var cmd string
		switch {
		case (s == "-c" || s == "--cmd" || s == "--eval" || s == "-e") && i+1 < len(args):
			i++
			cmd = args[i].s
		case strings.HasPrefix(s, "+") && len(s) > 1:
			cmd = s[1:]
		case strings.HasPrefix(s, "-"):
			continue
		default:
			found = max(found, c.a.write(c.sc, args[i], modifyWrite, stream{}, c.name))
			continue
		}
		cmd = strings.TrimLeft(cmd, ": ")
		switch {
		case strings.HasPrefix(cmd, "!"):
			c.script(strings.TrimPrefix(cmd, "!"), args[i].fl, "editor shell escape")
		case strings.HasPrefix(cmd, "sh ") || strings.HasPrefix(cmd, "shell ") || strings.HasPrefix(cmd, "terminal"):
			c.add(High, "R5 hidden command", "editor starts a shell")
		case strings.Contains(cmd, "system(") || strings.Contains(cmd, "shell-command") || strings.Contains(cmd, "call-process"):
			for _, m := range rxQuoted.FindAllStringSubmatch(cmd, -1) {
				c.script(unescapeC(m[1]), args[i].fl, "editor shell escape")
			}
			c.add(High, "R5 hidden command", "editor runs a command")
		}
	}
	c.workspaceChange(found, "editor "+c.name)
	c.secret = false
}

var rxQuoted = regexp.MustCompile(`["']((?:\\.|[^"'\\])*)["']`)

// sedReplacement returns the replacement of an s command's /pattern/repl/
// text (delimiter first), with backreferences (& and \1) left as markers.
func sedReplacement(s string) string {
	if len(s) < 2 {
		return ""
	}
	d := s[0]
	part, cur := 0, strings.Builder{}
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			i++
			if part == 1 && s[i] >= '0' && s[i] <= '9' {
				cur.WriteString(marker("match"))
			} else if part == 1 && s[i] == 'n' {
				cur.WriteByte('\n')
			} else if part == 1 {
				cur.WriteByte(s[i])
			}
		case s[i] == d:
			part++
			if part == 2 {
				return cur.String()
			}
		case part == 1 && s[i] == '&':
			cur.WriteString(marker("match"))
		case part == 1:
			cur.WriteByte(s[i])
		}
	}
	return cur.String()
}

// runsFoundScript reports a find -exec command that runs the found file as
// a script: a shell or interpreter given {} as its script operand.
func runsFoundScript(inner []field) bool {
	name := baseName(inner[0].s)
	if !isShellName(name) && !isInterpreterName(name) {
		return false
	}
	for _, a := range inner[1:] {
		if a.s == "-c" || a.s == "-e" {
			return false
		}
		if !strings.HasPrefix(a.s, "-") {
			return strings.Contains(a.s, "{}")
		}
	}
	return false
}

// isSecretName reports a file name (or name pattern) that secret material
// goes by: private keys, .env files, cloud credentials, shadow files.
func isSecretName(pat string) bool {
	pat = strings.Trim(pat, "*")
	switch {
	case pat == "":
		return false
	case strings.HasPrefix(pat, "id_") && !strings.HasSuffix(pat, ".pub"),
		pat == "credentials", pat == "shadow", pat == ".netrc", pat == ".git-credentials", pat == ".pgpass", pat == ".vault-token":
		return true
	}
	return isSecretPath("/x/" + pat)
}
