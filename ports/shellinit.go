package ports

// ShellIntegration rewrites the spawn of an interactive shell under a pty so
// that it reports its command boundaries (OSC 133/633/7). For a shell it
// does not know, ok is false and args and env come back unchanged.
type ShellIntegration interface {
	Prepare(program string, args, env []string) (newArgs, newEnv []string, ok bool, err error)
}

// RemoteShellIntegration is implemented by a ShellIntegration that can
// also rewrite the spawn of a shell on another machine: its scripts then
// travel with the spec (SpawnSpec.Files) instead of being read from this
// machine's disk, and remove themselves once the shell has read them.
type RemoteShellIntegration interface {
	PrepareRemote(program string, args, env []string) (newArgs, newEnv []string, files map[string]string, ok bool)
}
