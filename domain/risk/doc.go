// Package risk classifies a shell command line by what bash would run
// (docs/risk-policy.md, rules R0–R20; the rule ids in reasons and comments
// refer to that file), for the agent gate of seed 002.
//
// The classifier is an abstract interpreter over the syntax tree of
// mvdan.cc/sh/v3: it visits every statement that can run (both branches of
// a conditional, loop bodies, function bodies, substitutions, scripts handed
// to shells and interpreters) and classifies each simple command from its
// expanded argv. Words are expanded with mvdan.cc/sh/v3/expand against a
// scope that holds only what the line itself assigns: literal variables,
// loop values, the working directory and functions. Anything else, such as
// an environment variable or the output of a real program, becomes a marker
// that means "known only at run time" (R3, R17).
//
// Command substitutions are not run but analysed; their output is computed
// for pure text commands (echo, printf, base64 -d, rev, tr, xxd -r …), which
// is how `$(echo rm)` and `echo cm0gLXJmIC8= | base64 -d | sh` are seen as
// bash would see them (R3, R4).
//
// mvdan.cc/sh/v3/interp was considered for a recorded dry run and not used:
// it imports os/exec, its default handlers touch the file system (cd,
// globbing, source, test), its bounds are wall-clock time, and a dry run
// takes one path through a conditional where the policy needs all of them.
//
// Context can raise a command's risk but never lower it (R1): the parts of
// a line that could be typed on their own are also classified alone, so
// `D=/srv; rm -rf "$D"/` is as forbidden as `rm -rf "$D"/`.
//
// Everything here is pure: no file, network or clock access and no
// goroutines. Work is bounded by step, depth and size budgets; a line that
// exceeds them is forbidden, with the command names that are cheap to pick
// out still classified (R2 analysis budget).
package risk
