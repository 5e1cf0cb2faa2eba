package ahp

import (
	"fmt"
	"strconv"
	"strings"
)

// semver is MAJOR.MINOR.PATCH with no pre-release, build or leading zeros.
type semver struct{ major, minor, patch int }

func parseVersion(s string) (semver, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return semver{}, fmt.Errorf("%q is not a MAJOR.MINOR.PATCH version", s)
	}
	var v [3]int
	for i, p := range parts {
		if p == "" || (len(p) > 1 && p[0] == '0') || strings.TrimLeft(p, "0123456789") != "" {
			return semver{}, fmt.Errorf("%q is not a MAJOR.MINOR.PATCH version", s)
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return semver{}, fmt.Errorf("%q is not a MAJOR.MINOR.PATCH version", s)
		}
		v[i] = n
	}
	return semver{v[0], v[1], v[2]}, nil
}

func (a semver) less(b semver) bool {
	if a.major != b.major {
		return a.major < b.major
	}
	if a.minor != b.minor {
		return a.minor < b.minor
	}
	return a.patch < b.patch
}

// baseline is one served range: the patch releases of one MAJOR.MINOR line,
// at or above the baseline. Whole lines only, never a caret range over
// later minors: a minor release may add behaviour (1.1.0's per-channel
// reconnect), and a version is accepted only once its messages are
// implemented here (D11 in docs/protocol.md).
type baseline struct {
	base semver
	text string
}

// baselines are the versions this host serves. The 0.5 line starts at 0.5.1
// (0.5.0 is not wire-compatible with it). 1.1.0 is not served: its reconnect
// (per-channel cursors and a channels result) is not implemented, so a
// client offering 1.1.0 and 1.0.0 gets 1.0.0.
var baselines = []baseline{
	{semver{1, 0, 0}, ">=1.0.0 <1.1.0"},
	{semver{0, 9, 0}, ">=0.9.0 <0.10.0"},
	{semver{0, 8, 0}, ">=0.8.0 <0.9.0"},
	{semver{0, 7, 0}, ">=0.7.0 <0.8.0"},
	{semver{0, 6, 0}, ">=0.6.0 <0.7.0"},
	{semver{0, 5, 1}, ">=0.5.1 <0.6.0"},
}

// SupportedVersions lists the served ranges, for -32005's data.
func SupportedVersions() []string {
	out := make([]string, len(baselines))
	for i, b := range baselines {
		out[i] = b.text
	}
	return out
}

func supported(v semver) bool {
	for _, b := range baselines {
		sameLine := v.major == b.base.major && v.minor == b.base.minor
		if sameLine && !v.less(b.base) {
			return true
		}
	}
	return false
}

// negotiate picks the highest offered version inside a served range,
// whatever the order of the offer. A malformed entry is an error; no match
// returns ok=false.
func negotiate(offered []string) (chosen string, ok bool, err error) {
	var best semver
	for i, s := range offered {
		v, err := parseVersion(s)
		if err != nil {
			return "", false, fmt.Errorf("protocolVersions[%d]: %w", i, err)
		}
		if supported(v) && (!ok || best.less(v)) {
			best, chosen, ok = v, s, true
		}
	}
	return chosen, ok, nil
}
