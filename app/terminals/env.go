package terminals

import (
	"strings"
)

// lookupEnv returns the value of key in env ("K=V" entries), or "".
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// mergeEnv layers environments: a later layer's variable replaces an
// earlier one's, and each variable appears once.
func mergeEnv(layers ...[]string) []string {
	index := map[string]int{}
	var out []string
	for _, layer := range layers {
		for _, kv := range layer {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				continue
			}
			if i, seen := index[k]; seen {
				out[i] = kv
				continue
			}
			index[k] = len(out)
			out = append(out, kv)
		}
	}
	return out
}

// quoteArgv turns an argv into a shell line that runs exactly that argv:
// every word single-quoted, a quote inside spelled '\”.
func quoteArgv(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}
