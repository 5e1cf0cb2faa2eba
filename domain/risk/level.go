package risk

import (
	"fmt"
	"strings"
)

// Level is the risk of a command, ordered so that a larger value is riskier.
type Level int

// The risk levels, from least to most risky (docs/risk-policy.md, "Levels").
const (
	Safe Level = iota
	Moderate
	High
	Dangerous
	Forbidden
)

var levelNames = [...]string{"safe", "moderate", "high", "dangerous", "forbidden"}

// String returns the lower-case wire name of the level, as used by seed 002.
func (l Level) String() string {
	if l < Safe || l > Forbidden {
		return fmt.Sprintf("level(%d)", int(l))
	}
	return levelNames[l]
}

// ParseLevel turns a wire name ("safe", "HIGH", …) back into a Level.
func ParseLevel(s string) (Level, error) {
	want := strings.ToLower(strings.TrimSpace(s))
	for i, n := range levelNames {
		if n == want {
			return Level(i), nil
		}
	}
	return Safe, fmt.Errorf("unknown risk level %q: want one of %s", s, strings.Join(levelNames[:], ", "))
}

// MarshalText encodes the level by name so JSON and YAML carry "high", not 2.
func (l Level) MarshalText() ([]byte, error) {
	if l < Safe || l > Forbidden {
		return nil, fmt.Errorf("cannot encode invalid risk %d", int(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText decodes a level from its name.
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}
