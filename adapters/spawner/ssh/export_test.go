package ssh

// StartScript is startScript, for tests.
var StartScript = startScript
