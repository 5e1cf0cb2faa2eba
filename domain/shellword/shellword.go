// Package shellword names what the risk classifier needs from a shell word
// expander — expanding words as bash would, while asking its caller for
// every variable and substitution, so nothing is ever looked up or run —
// without depending on one. adapters/shellexpand provides it.
package shellword

import (
	"iter"

	"mvdan.cc/sh/v3/syntax"
)

// Var is a variable's value as the expander sees it.
type Var struct {
	// Set is false for an unset variable.
	Set bool
	// Indexed marks an array (List); otherwise Str is the value.
	Indexed bool
	Str     string
	List    []string
}

// Hooks are the questions an expansion asks its caller.
type Hooks struct {
	// Var returns the value of a variable.
	Var func(name string) Var
	// CmdSubst returns what a command substitution would print.
	CmdSubst func(*syntax.CmdSubst) (string, error)
	// ProcSubst returns the path a process substitution stands for.
	ProcSubst func(*syntax.ProcSubst) (string, error)
}

// Expander expands shell words. It reads no files and runs nothing: all it
// knows comes from the hooks.
type Expander interface {
	// Fields expands a word as a command argument: braces, tilde,
	// parameters, substitutions, splitting and quote removal. It is lazy, so
	// a caller can stop early.
	Fields(h Hooks, w *syntax.Word) iter.Seq2[string, error]
	// Literal expands a word as an assignment value (no splitting).
	Literal(h Hooks, w *syntax.Word) (string, error)
	// Document expands a here-document body.
	Document(h Hooks, w *syntax.Word) (string, error)
	// Format is printf's formatting of args by format; it returns how many
	// args it used.
	Format(format string, args []string) (string, int, error)
}
