//go:build race

package tests

// raceEnabled: the tests run under the race detector, so the daemon they
// start is built with it too, and a race in the real path fails the run.
const raceEnabled = true
