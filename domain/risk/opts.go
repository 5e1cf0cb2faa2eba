package risk

import (
	"slices"
	"strings"
)

// opt is one parsed command-line option: "-r" or "--recursive".
type opt struct {
	name string
	val  field
	has  bool
}

type parsed struct {
	opts []opt
	pos  []field
	// rest is everything from the first operand on, for wrappers whose
	// operand starts the inner command.
	rest []field
}

// getopt parses args the way most GNU tools do. shortArg lists the short
// options that take a value, longArg the long ones. With permute, options
// may follow operands (rm a -rf); without, the first operand ends them
// (sudo -u x CMD -rf).
func getopt(args []field, shortArg string, longArg []string, permute bool) parsed {
	var p parsed
	for i := 0; i < len(args); i++ {
		a := args[i]
		s := a.s
		switch {
		case s == "--":
			p.pos = append(p.pos, args[i+1:]...)
			if p.rest == nil {
				p.rest = args[i+1:]
			}
			return p
		case strings.HasPrefix(s, "--") && len(s) > 2:
			name, val, hasEq := strings.Cut(s, "=")
			o := opt{name: name}
			if hasEq {
				o.val, o.has = field{s: val, fl: a.fl}, true
			} else if slices.Contains(longArg, name) && i+1 < len(args) {
				i++
				o.val, o.has = args[i], true
			}
			p.opts = append(p.opts, o)
		case strings.HasPrefix(s, "-") && len(s) > 1 && !isNumberish(s):
			for j := 1; j < len(s); j++ {
				ch := s[j]
				o := opt{name: "-" + string(ch)}
				if strings.IndexByte(shortArg, ch) >= 0 {
					if j+1 < len(s) {
						o.val, o.has = field{s: s[j+1:], fl: a.fl}, true
					} else if i+1 < len(args) {
						i++
						o.val, o.has = args[i], true
					}
					p.opts = append(p.opts, o)
					break
				}
				p.opts = append(p.opts, o)
			}
		default:
			if !permute {
				p.pos = append(p.pos, args[i:]...)
				p.rest = args[i:]
				return p
			}
			p.pos = append(p.pos, a)
		}
	}
	return p
}

func isNumberish(s string) bool {
	return len(s) > 1 && s[0] == '-' && isDigits(s[1:])
}

// has reports whether any of the named options was given.
func (p parsed) has(names ...string) bool {
	for _, o := range p.opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

// val returns the value of the last of the named options.
func (p parsed) val(names ...string) (field, bool) {
	var out field
	found := false
	for _, o := range p.opts {
		if o.has && slices.Contains(names, o.name) {
			out, found = o.val, true
		}
	}
	return out, found
}

// vals returns every value given to the named options.
func (p parsed) vals(names ...string) []field {
	var out []field
	for _, o := range p.opts {
		if o.has && slices.Contains(names, o.name) {
			out = append(out, o.val)
		}
	}
	return out
}

// firstWord returns the first positional argument's text, or "".
func (p parsed) firstWord() string {
	if len(p.pos) == 0 {
		return ""
	}
	return p.pos[0].s
}

// argStrings returns the texts of args.
func argStrings(args []field) []string { return fieldStrings(args) }

// hasArg reports whether any argument equals one of vals.
func hasArg(args []field, vals ...string) bool {
	for _, a := range args {
		if slices.Contains(vals, a.s) {
			return true
		}
	}
	return false
}

// hasShortFlag reports a short option letter given alone or in a cluster
// (-r, -rf, -fr), ignoring long options.
func hasShortFlag(args []field, letters string) bool {
	for _, a := range args {
		s := a.s
		if s == "--" {
			return false
		}
		if len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.ContainsAny(s[1:], letters) {
			return true
		}
	}
	return false
}
