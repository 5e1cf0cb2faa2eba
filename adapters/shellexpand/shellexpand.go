// Package shellexpand expands shell words with mvdan.cc/sh/v3/expand for
// the risk classifier (domain/shellword.Expander). Every variable and
// substitution is answered by the caller's hooks; the environment, the file
// system and commands are never touched.
package shellexpand

import (
	"io"
	"iter"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/shellgate/shellgate/domain/shellword"
)

// Expander is the shellword.Expander over mvdan.cc/sh/v3/expand.
type Expander struct{}

var _ shellword.Expander = Expander{}

// New returns the expander.
func New() Expander { return Expander{} }

// Fields expands w as an argument.
func (Expander) Fields(h shellword.Hooks, w *syntax.Word) iter.Seq2[string, error] {
	return expand.FieldsSeq(config(h), w)
}

// Literal expands w as an assignment value.
func (Expander) Literal(h shellword.Hooks, w *syntax.Word) (string, error) {
	return expand.Literal(config(h), w)
}

// Document expands a here-document body.
func (Expander) Document(h shellword.Hooks, w *syntax.Word) (string, error) {
	return expand.Document(config(h), w)
}

// Format formats args as printf would.
func (Expander) Format(format string, args []string) (string, int, error) {
	// A config of its own: given nil, the library prepares its one shared
	// zero config in place, a data race between two classifications at
	// once (two agents' requests), which the compound-rule test running
	// in parallel showed under -race.
	return expand.Format(&expand.Config{}, format, args)
}

func config(h shellword.Hooks) *expand.Config {
	cfg := &expand.Config{Env: environ{h.Var}}
	if h.CmdSubst != nil {
		cfg.CmdSubst = func(w io.Writer, cs *syntax.CmdSubst) error {
			out, err := h.CmdSubst(cs)
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, out)
			return err
		}
	}
	if h.ProcSubst != nil {
		cfg.ProcSubst = h.ProcSubst
	}
	return cfg
}

// environ answers variables from the hook alone; it lists nothing.
type environ struct{ get func(string) shellword.Var }

func (e environ) Get(name string) expand.Variable {
	if e.get == nil {
		return expand.Variable{}
	}
	v := e.get(name)
	if !v.Set {
		return expand.Variable{}
	}
	if v.Indexed {
		return expand.Variable{Set: true, Kind: expand.Indexed, List: v.List}
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: v.Str}
}

func (environ) Each(func(string, expand.Variable) bool) {}
