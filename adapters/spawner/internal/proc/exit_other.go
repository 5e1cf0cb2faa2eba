//go:build !linux

package proc

// watchExit declines without pidfds: the child gets a blocking wait of its
// own.
func watchExit(*Child) bool { return false }
