package ports

// ShellIntegration rewrites the spawn of an interactive shell under a pty so
// that it reports its command boundaries (OSC 133/633/7). For a shell it
// does not know, ok is false and args and env come back unchanged.
type ShellIntegration interface {
	Prepare(program string, args, env []string) (newArgs, newEnv []string, ok bool, err error)
}
