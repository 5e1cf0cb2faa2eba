package risk

import (
	"path"
	"slices"
	"strings"
)

func registerNetHandlers(reg func(func(*call), ...string)) {
	reg(hCurl, "curl")
	reg(hWget, "wget", "wget2")
	reg(hDownloader, "aria2c", "axel", "http", "https", "xh", "lwp-download", "fetch", "GET", "lwp-request", "httpie", "curlie")
	reg(hQuery, "ping", "ping6", "dig", "nslookup", "host", "traceroute", "tracepath", "mtr", "whois", "drill", "kdig", "arping")
	reg(hNc, "nc", "ncat", "netcat", "nc.openbsd", "nc.traditional")
	reg(hSocat, "socat")
	reg(hTelnet, "telnet")
	reg(hSSH, "ssh", "autossh", "mosh")
	reg(hScp, "scp", "sftp")
	reg(hRsync, "rsync")
	reg(hOpenssl, "openssl")
	reg(hRg, "rg", "ripgrep")
}

// hRg: ripgrep is a reader, but --pre names a program it runs on every file (R5).
func hRg(c *call) {
	p := getopt(c.args(), "eEfgjmAaBCtTrMp", []string{"--pre", "--regexp", "--file", "--glob", "--type", "--max-count", "--replace", "--context",
		"--after-context", "--before-context", "--threads", "--max-depth", "--encoding", "--sort", "--sortr", "--type-add", "--colors", "--pre-glob"}, true)
	for _, pre := range p.vals("--pre") {
		c.run(append(splitWords(pre), lit(marker("file"))))
	}
	passThrough(c, Safe, "R15 read-only")
}

func registerDevHandlers(reg func(func(*call), ...string)) {
	reg(levelHandler(Safe, "R15 read-only"), "sleep", "true", "false", ":", "wait", "shift", "break", "continue", "return", "exit")
}

// exfil checks an outgoing transfer for secret material (R11).
func (c *call) exfil(what string, fl fflags) {
	if fl&fSecret != 0 || c.secret || c.in.piped && c.in.flags&fSecret != 0 {
		c.add(Dangerous, "R11 secret exfiltration", what+" sends secret material off the host")
	}
}

func hCurl(c *call) {
	p := getopt(c.args(), "oTFdHXuAebcKxEwmrCzYyQtPUD", []string{"--output", "--upload-file", "--form", "--data", "--data-binary", "--data-raw",
		"--data-urlencode", "--data-ascii", "--json", "--header", "--request", "--user", "--user-agent", "--referer", "--cookie",
		"--cookie-jar", "--config", "--proxy", "--cert", "--key", "--write-out", "--max-time", "--connect-timeout", "--retry",
		"--range", "--continue-at", "--url", "--resolve", "--output-dir", "--cacert", "--form-string", "--dump-header", "--trace", "--trace-ascii", "--stderr", "--variable", "--expand-data"}, true)
	c.add(Moderate, "R11 network", "curl")
	var fl fflags
	for _, a := range c.args() {
		fl |= a.fl & fSecret
	}
	upload := false
	for _, o := range p.opts {
		v := o.val.s
		switch o.name {
		case "-T", "--upload-file":
			upload = true
			fl |= c.a.readTarget(c.sc, o.val)
			if v == "-" || v == "." {
				fl |= c.in.flags & fSecret
			}
		case "-F", "--form":
			if _, after, ok := strings.Cut(v, "=@"); ok {
				upload = true
				fl |= c.a.readTarget(c.sc, field{s: strings.Split(after, ";")[0]})
			} else if strings.Contains(v, "=<") {
				upload = true
				_, after, _ := strings.Cut(v, "=<")
				fl |= c.a.readTarget(c.sc, field{s: after})
			}
			fl |= o.val.fl & fSecret
		case "-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii", "--json":
			if f, ok := strings.CutPrefix(v, "@"); ok {
				upload = true
				if f == "-" {
					fl |= c.in.flags & fSecret
				} else {
					fl |= c.a.readTarget(c.sc, field{s: f})
				}
			}
			fl |= o.val.fl & fSecret
		case "-H", "--header", "-u", "--user", "-b", "--cookie", "-e", "--referer", "-A", "--user-agent":
			fl |= o.val.fl & fSecret
		case "-K", "--config":
			c.add(High, "R11 upload", "curl reads its options from "+v)
		}
	}
	for _, u := range p.pos {
		fl |= u.fl & fSecret
	}
	if upload {
		c.add(High, "R11 upload", "curl uploads local data")
	}
	if fl&fSecret != 0 || upload && c.secret {
		c.add(Dangerous, "R11 secret exfiltration", "curl sends secret material off the host")
	}
	c.secret = false
	if o, ok := p.val("-o", "--output"); ok && o.s != "-" {
		c.a.write(c.sc, o, truncateWrite, stream{}, "curl -o")
		c.a.markDownloaded(c.sc, o.s)
		c.setOut(stream{})
		return
	}
	if p.has("-O", "--remote-name", "--remote-name-all") {
		for _, u := range p.pos {
			if name := urlBase(u.s); name != "" {
				c.a.markDownloaded(c.sc, name)
			}
		}
		c.setOut(stream{})
		return
	}
	c.setOut(unknownStream(fDownload))
}

// urlBase is the file name a downloader saves a URL under.
func urlBase(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	rest, _, _ = strings.Cut(rest, "?")
	rest, _, _ = strings.Cut(rest, "#")
	_, p, ok := strings.Cut(rest, "/")
	if !ok || p == "" {
		return ""
	}
	b := path.Base("/" + p)
	if b == "/" || b == "." {
		return ""
	}
	return b
}

func hWget(c *call) {
	p := getopt(c.args(), "OoaPiUeBtTwQlAR", []string{"--output-document", "--output-file", "--append-output", "--directory-prefix",
		"--input-file", "--user-agent", "--execute", "--base", "--tries", "--timeout", "--wait", "--quota", "--level", "--accept", "--reject",
		"--post-data", "--post-file", "--body-data", "--body-file", "--method", "--header", "--user", "--password", "--load-cookies", "--save-cookies"}, true)
	c.add(Moderate, "R11 network", c.name)
	for _, o := range p.opts {
		switch o.name {
		case "--post-file", "--body-file":
			c.add(High, "R11 upload", "wget uploads a file")
			c.exfil("wget", c.a.readTarget(c.sc, o.val))
		case "--post-data", "--body-data", "--header":
			c.exfil("wget", o.val.fl)
		}
	}
	for _, u := range p.pos {
		c.exfil("wget", u.fl&fSecret)
	}
	c.secret = false
	if o, ok := p.val("-O", "--output-document"); ok {
		if o.s == "-" {
			c.setOut(unknownStream(fDownload))
			return
		}
		c.a.write(c.sc, o, truncateWrite, stream{}, "wget -O")
		c.a.markDownloaded(c.sc, o.s)
		c.setOut(stream{})
		return
	}
	dir, hasDir := p.val("-P", "--directory-prefix")
	for _, u := range p.pos {
		if name := urlBase(u.s); name != "" {
			if hasDir {
				name = dir.s + "/" + name
			}
			c.a.markDownloaded(c.sc, name)
		}
	}
	c.setOut(stream{})
}

func hDownloader(c *call) {
	c.add(Moderate, "R11 network", c.name)
	args := c.args()
	for i, a := range args {
		if (a.s == "-o" || a.s == "-O" || a.s == "--output" || a.s == "--out" || a.s == "--download") && i+1 < len(args) {
			c.a.write(c.sc, args[i+1], truncateWrite, stream{}, c.name)
			c.a.markDownloaded(c.sc, args[i+1].s)
		}
		if strings.HasPrefix(a.s, "@") || strings.Contains(a.s, "=@") || strings.Contains(a.s, ":=@") {
			c.add(High, "R11 upload", c.name+" uploads a file")
		}
		c.exfil(c.name, a.fl&fSecret)
	}
	for _, u := range args {
		if name := urlBase(u.s); name != "" && strings.Contains(u.s, "://") && (c.name == "aria2c" || c.name == "axel" || c.name == "fetch") {
			c.a.markDownloaded(c.sc, name)
		}
	}
	c.secret = false
	c.setOut(unknownStream(fDownload))
}

// hQuery: ping, dig … are network I/O (moderate); a substituted secret in
// the name queried is DNS exfiltration (R11).
func hQuery(c *call) {
	c.add(Moderate, "R11 network", c.name)
	for _, a := range c.args() {
		if a.fl&fSecret != 0 {
			c.add(Dangerous, "R11 secret exfiltration", c.name+" leaks secret material in a lookup")
		}
	}
	if c.name == "ping" && hasArg(c.args(), "-f") {
		c.add(High, "R11 active scanning", "ping -f floods")
	}
	c.secret = false
}

func hNc(c *call) {
	args := c.args()
	c.a.events |= evNetSocket
	c.add(Moderate, "R11 network", c.name)
	for i, a := range args {
		s := a.s
		switch {
		case s == "--exec" || s == "--sh-exec" || s == "--lua-exec" || len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.ContainsAny(s[len(s)-1:], "ec") && i+1 < len(args):
			c.add(Forbidden, "R9f reverse shell", c.name+" "+s+" joins a shell to a socket")
			return
		case strings.HasPrefix(s, "--exec=") || strings.HasPrefix(s, "--sh-exec="):
			c.add(Forbidden, "R9f reverse shell", c.name+" "+s)
			return
		}
	}
	if hasShortFlag(args, "l") || hasArg(args, "--listen") {
		c.add(High, "R11 listening socket", c.name+" -l")
	}
	if hasShortFlag(args, "z") {
		c.add(High, "R11 active scanning", c.name+" -z scans ports")
	}
	if c.in.piped {
		c.exfil(c.name, c.in.flags)
	}
	c.secret = false
	c.setOut(unknownStream(fDownload))
}

func hSocat(c *call) {
	c.a.events |= evNetSocket
	c.add(Moderate, "R11 network", "socat")
	for _, a := range c.args() {
		l := strings.ToLower(a.s)
		if strings.HasPrefix(l, "exec:") || strings.HasPrefix(l, "system:") || strings.Contains(l, ",exec:") {
			c.add(Forbidden, "R9f reverse shell", "socat exec: joins a program to a socket")
			return
		}
		if strings.Contains(l, "-listen:") || strings.HasPrefix(l, "tcp-l:") || strings.HasPrefix(l, "udp-l:") {
			c.add(High, "R11 listening socket", "socat listen")
		}
	}
	c.exfil("socat", c.in.flags)
	c.secret = false
	c.setOut(unknownStream(fDownload))
}

func hTelnet(c *call) {
	c.a.events |= evNetSocket
	c.add(Moderate, "R11 network", c.name)
	c.exfil(c.name, c.in.flags)
	c.setOut(unknownStream(fDownload))
}

func hOpenssl(c *call) {
	args := c.args()
	sub, _ := firstSub(args)
	switch sub {
	case "s_client":
		c.a.events |= evNetSocket
		c.add(Moderate, "R11 network", "openssl s_client")
		c.exfil("openssl s_client", c.in.flags)
		c.setOut(unknownStream(fDownload))
	case "s_server":
		c.a.events |= evNetSocket
		c.add(High, "R11 listening socket", "openssl s_server")
	case "base64", "enc":
		c.add(Safe, "R15 read-only", "openssl "+sub)
		if hasArg(args, "-d") && (sub == "base64" || hasArg(args, "-base64", "-a")) {
			hBase64(&call{a: c.a, sc: c.sc, name: "base64", argv: []field{lit("base64"), lit("-d")}, in: c.in})
			c.a.add(Safe, "R15 read-only", "openssl decode")
			in, ok := c.inputText(nil)
			if ok {
				if dec, err := decodeBase64(strings.Join(strings.Fields(in.text), "")); err == nil {
					c.setOut(textStream(string(dec), in.flags|fDecoded))
					return
				}
			}
			c.setOut(unknownStream(in.flags | fDecoded))
		}
	default:
		c.add(Moderate, "R14 workspace change", "openssl "+sub)
	}
}

var sshOptsWithArg = "BbcDEeFIiJLlmOopQRSWw"

// hSSH: ssh HOST CMD runs CMD remotely (floor high); ssh HOST alone is an
// interactive session (high); ProxyCommand runs locally (R5, R11).
func hSSH(c *call) {
	args := c.args()
	c.add(High, "R11 remote session", c.name)
	i := 0
	for ; i < len(args); i++ {
		s := args[i].s
		if s == "--" {
			i++
			break
		}
		if !strings.HasPrefix(s, "-") || len(s) < 2 {
			break
		}
		for j := 1; j < len(s); j++ {
			if strings.IndexByte(sshOptsWithArg, s[j]) >= 0 {
				var val field
				if j+1 < len(s) {
					val = field{s: s[j+1:], fl: args[i].fl}
				} else if i+1 < len(args) {
					i++
					val = args[i]
				}
				if s[j] == 'o' {
					c.sshOption(val)
				}
				break
			}
		}
	}
	if i < len(args) {
		i++ // the host
	}
	if c.in.piped {
		c.exfil("ssh", c.in.flags)
	}
	c.secret = false
	if i >= len(args) {
		return
	}
	text, fl := joinFields(args[i:])
	sc := c.sc.clone()
	sc.remote = true
	sc.cwd = []string{homeDir}
	sc.container = false
	c.setOut(c.a.scriptIn(sc, text, fl, "ssh remote command", c.in, nil, false))
}

func (c *call) sshOption(val field) {
	k, v, ok := strings.Cut(val.s, "=")
	if !ok {
		k, v, _ = strings.Cut(val.s, " ")
	}
	switch strings.ToLower(strings.TrimSpace(k)) {
	case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
		c.script(strings.TrimSpace(v), val.fl, "ssh "+k)
	}
}

// remoteArg reports an scp/rsync operand on another host (host:path).
func remoteArg(s string) bool {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "-") {
		return false
	}
	if strings.Contains(s, "://") {
		return true
	}
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.Contains(s[:i], "/")
}

func hScp(c *call) {
	p := getopt(c.args(), "cFiJloPS", nil, true)
	c.add(Moderate, "R11 network", c.name)
	for _, o := range p.vals("-o") {
		c.sshOption(o)
	}
	if prog, ok := p.val("-S"); ok {
		c.run([]field{prog})
	}
	if c.name == "sftp" {
		c.add(High, "R11 remote session", "sftp")
		return
	}
	if len(p.pos) < 2 {
		return
	}
	dst := p.pos[len(p.pos)-1]
	srcs := p.pos[:len(p.pos)-1]
	if remoteArg(dst.s) {
		c.add(High, "R11 upload", "scp copies local files to a remote host")
		var fl fflags
		for _, s := range srcs {
			if !remoteArg(s.s) {
				fl |= c.a.readTarget(c.sc, s)
			}
		}
		c.exfil("scp", fl)
	} else {
		c.a.write(c.sc, dst, truncateWrite, stream{}, "scp")
	}
	c.secret = false
}

func hRsync(c *call) {
	c.hiddenOptions("rsync", c.args())
	p := getopt(c.args(), "eBfT", []string{"--rsh", "--rsync-path", "--filter", "--exclude", "--include", "--exclude-from", "--include-from",
		"--files-from", "--temp-dir", "--backup-dir", "--suffix", "--chmod", "--chown", "--log-file", "--password-file", "--port", "--timeout", "--bwlimit"}, true)
	if e, ok := p.val("-e", "--rsh"); ok {
		c.run(splitWords(e))
	}
	if _, ok := p.val("--rsync-path"); ok {
		c.add(High, "R11 remote session", "rsync --rsync-path runs a remote command")
	}
	if len(p.pos) < 2 {
		c.workspaceChange(Safe, "rsync")
		return
	}
	dst := p.pos[len(p.pos)-1]
	srcs := p.pos[:len(p.pos)-1]
	if p.has("-n", "--dry-run") {
		// Only lists what it would transfer.
		c.secret = false
		if remoteArg(dst.s) || slices.ContainsFunc(srcs, func(f field) bool { return remoteArg(f.s) }) {
			c.add(Moderate, "R11 network", "rsync --dry-run")
			return
		}
		c.add(Safe, "R15 read-only", "rsync --dry-run")
		return
	}
	del := slices.ContainsFunc(p.opts, func(o opt) bool { return strings.HasPrefix(o.name, "--delete") || o.name == "--remove-source-files" })
	if remoteArg(dst.s) {
		c.add(High, "R11 upload", "rsync copies local files to a remote host")
		var fl fflags
		for _, s := range srcs {
			if !remoteArg(s.s) {
				fl |= c.a.readTarget(c.sc, s)
			}
		}
		c.exfil("rsync", fl)
	} else {
		for _, s := range srcs {
			if remoteArg(s.s) {
				c.add(Moderate, "R11 network", "rsync download")
			}
		}
		if del {
			c.workspaceChange(c.a.destroy(c.sc, dst, recursiveDelete, "rsync --delete"), "rsync")
		} else {
			c.workspaceChange(c.a.write(c.sc, dst, appendWrite, stream{}, "rsync"), "rsync")
		}
	}
	c.secret = false
}
