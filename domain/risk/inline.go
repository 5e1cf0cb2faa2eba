package risk

import (
	"encoding/hex"
	"regexp"
	"strings"
)

// Effects of inline interpreter code beyond the names it mentions
// (risk-policy.md R6): process termination in any language, deletions of
// home, root and system paths however the path is spelt, names built or
// decoded at run time, and a secret read together with a network send.

var (
	// rxHomeExpr are the ways interpreters spell the home directory.
	rxHomeExpr = regexp.MustCompile(`Path\.home\(\)|(?:require\(\s*["']os["']\s*\)|os)\.homedir\(\)|os\.path\.expanduser\(\s*["']~["']\s*\)|` +
		`os\.environ\[\s*["']HOME["']\s*\]|os\.getenv\(\s*["']HOME["']\s*\)|os\.environ\.get\(\s*["']HOME["']\s*\)|process\.env\.HOME|` +
		`process\.env\[\s*["']HOME["']\s*\]|Dir\.home|ENV\[\s*["']HOME["']\s*\]|\$ENV\{\s*["']?HOME["']?\s*\}|Deno\.env\.get\(\s*["']HOME["']\s*\)|os\.Getenv\(\s*"HOME"\s*\)`)
	// rxPathJoin joins a quoted directory and a quoted name.
	rxPathJoin = regexp.MustCompile(`(?:os\.path\.join|path\.join|File\.join)\(\s*"([^"]*)"\s*,\s*["']([^"']*)["']\s*\)`)
	// rxConcat is two string literals joined by + or . (perl, php).
	rxConcat = regexp.MustCompile(`"([^"\\]*)"\s*[+.]\s*["']([^"'\\]*)["']|'([^'\\]*)'\s*[+.]\s*["']([^"'\\]*)["']|"([^"\\]*)"\s*/\s*"([^"\\]*)"`)
	// rxGlobCall is perl's and python's glob("pattern"): the pattern is the path.
	rxGlobCall = regexp.MustCompile(`glob(?:\.glob)?\s*\(\s*(["'][^"']*["'])\s*\)`)
	// rxKillCall terminates processes.
	rxKillCall = regexp.MustCompile(`\b(?:os\.kill|os\.killpg|process\.kill|Process\.kill|posix_kill|signal\.pthread_kill|syscall\.Kill|Deno\.kill|proc_terminate)\s*\(`)
	// rxPerlKill is perl's kill SIGNAL, LIST.
	rxPerlKill = regexp.MustCompile(`(?:^|[;{(\s])kill\s*\(?\s*['"]?-?\w+['"]?\s*,`)
	// rxDynamicName calls something by a name it builds: getattr,
	// __import__, import_module, send, call_user_func, eval/exec of text.
	rxDynamicName = regexp.MustCompile(`\b(?:getattr|__import__|import_module|public_send|send|call_user_func|constantize|exec|eval|Function)\s*\(`)
	// rxHexDecode decodes hex text.
	rxHexDecode = regexp.MustCompile(`(?:fromhex|unhexlify|a2b_hex|hex2bin)\s*\(\s*b?["']([0-9a-fA-F\s]{8,})["']|Buffer\.from\(\s*["']([0-9a-fA-F]{8,})["']\s*,\s*["']hex["']|pack\(\s*["']H\*["']\s*,\s*["']([0-9a-fA-F]{8,})["']`)
	// rxEnvDump passes the whole environment somewhere.
	rxEnvDump = regexp.MustCompile(`JSON\.stringify\(\s*process\.env\s*\)|dict\(\s*os\.environ\s*\)|str\(\s*os\.environ\s*\)|os\.environ\s*\)|process\.env\s*[,)}]|ENV\.to_h|%ENV|\benviron\b\s*\)`)
	// rxNetSend sends data over the network.
	rxNetSend = regexp.MustCompile(`(?i)requests\.(?:post|put|patch)|urlopen\s*\(|urllib\.request|http\.client|\.sendall?\s*\(|\bfetch\s*\(|XMLHttpRequest|axios|Net::HTTP|post_form|LWP::|HTTP::Tiny|curl_exec|smtplib|ftplib|https?\.request|socket\.create_connection|net\.connect`)
)

// normalizeCode rewrites interpreter code so the effect patterns see
// literal paths: the home directory's spellings become "/home/user",
// path joins and concatenations of literals are folded, glob("p") is "p".
// folded reports a concatenation of literals (a name built at run time).
func normalizeCode(text string) (out string, folded bool) {
	out = rxHomeExpr.ReplaceAllString(text, `"`+homeDir+`"`)
	if !strings.ContainsAny(out, "\"'") {
		return out, false
	}
	for range 8 {
		next := rxPathJoin.ReplaceAllString(out, `"$1/$2"`)
		next = rxConcat.ReplaceAllStringFunc(next, func(m string) string {
			sub := rxConcat.FindStringSubmatch(m)
			switch {
			case sub[5] != "" || sub[6] != "":
				return `"` + strings.TrimSuffix(sub[5], "/") + "/" + strings.TrimPrefix(sub[6], "/") + `"`
			case sub[1] != "" || sub[2] != "":
				return `"` + sub[1] + sub[2] + `"`
			default:
				return `"` + sub[3] + sub[4] + `"`
			}
		})
		if next == out {
			break
		}
		folded = true
		out = next
	}
	out = rxGlobCall.ReplaceAllString(out, "$1")
	return out, folded
}

// moreCodeEffects adds the effects codeEffects does not see by name.
func (a *analyzer) moreCodeEffects(sc *scope, lang, text string, fl fflags, depth int, folded bool) {
	if rxKillCall.MatchString(text) || strings.HasPrefix(lang, "perl") && rxPerlKill.MatchString(text) {
		a.add(Forbidden, "R7 process termination", lang+" code signals a process")
	}
	if folded && rxDynamicName.MatchString(text) {
		a.add(High, "R4 obfuscation floor", lang+" code calls a name built at run time")
	}
	if strings.Contains(text, "getattr(__import__") {
		a.add(High, "R4 obfuscation floor", lang+" code looks a function up by name at run time")
	}
	for _, m := range rxHexDecode.FindAllStringSubmatch(text, -1) {
		h := strings.Join(strings.Fields(m[1]+m[2]+m[3]), "")
		dec, err := hex.DecodeString(h)
		if err != nil {
			continue
		}
		a.add(High, "R4 obfuscation floor", lang+" decodes an embedded hex payload")
		a.codeEffects(sc, lang, string(dec), fl|fDecoded, depth+1)
		if looksLikeShell(string(dec)) {
			a.scriptIn(sc, string(dec), fl|fDecoded, lang+" decoded payload", ttyStream(), nil, false)
		}
	}
	if rxNetSend.MatchString(text) && (rxEnvDump.MatchString(text) || codeNamesSecret(sc, text)) {
		a.add(Dangerous, "R11 secret exfiltration", lang+" code reads secret material and sends it over the network")
	}
}

// codeNamesSecret reports a quoted path in code that is secret material.
func codeNamesSecret(sc *scope, text string) bool {
	for _, q := range rxQuotedString.FindAllStringSubmatch(text, -1) {
		s := q[1] + q[2]
		if strings.HasPrefix(s, "~") {
			s = homeDir + s[1:]
		}
		if !looksLikePath(s) && !strings.HasPrefix(s, ".env") {
			continue
		}
		for _, p := range sc.resolvePath(s) {
			if isSecretPath(p) {
				return true
			}
		}
	}
	return false
}
