package risk

import "github.com/shellgate/shellgate/adapters/shellexpand"

// classifier is the production classifier, over the real word expander.
var classifier = New(shellexpand.New())

// Classify lets the tables read as the rules do.
func Classify(command string) Assessment { return classifier.Classify(command) }
