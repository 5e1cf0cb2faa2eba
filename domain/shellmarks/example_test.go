package shellmarks_test

import (
	"fmt"
	"time"

	"github.com/shellgate/shellgate/domain/shellmarks"
	"github.com/shellgate/shellgate/domain/terminal"
)

// A pump cuts the cleaned output at each mark's offset, so data and the
// actions the marks cause reach the terminal in the order the shell printed
// them.
func Example() {
	var r shellmarks.Reader
	tr := shellmarks.NewTracker("file:///home/dev", "")
	var acts []terminal.Action
	now := time.UnixMilli(1760000000000)

	pump := func(read string) {
		out, marks := r.Feed([]byte(read), nil, nil)
		prev := 0
		for _, m := range marks {
			if m.Offset > prev {
				acts = append(acts, terminal.Data{Data: string(out[prev:m.Offset])})
				prev = m.Offset
			}
			acts = tr.Mark(m, now, acts)
		}
		if prev < len(out) {
			acts = append(acts, terminal.Data{Data: string(out[prev:])})
		}
	}

	pump("\x1b]133;A\a$ ")
	tr.Input([]byte("ls /nope\r"))
	pump("ls /nope\r\n\x1b]133;C\als: cannot access '/no")
	now = now.Add(12 * time.Millisecond)
	pump("pe'\r\n\x1b]133;D;2\a\x1b]7;file://box/home/dev/src\a\x1b]133;A\a$ ")

	for _, a := range acts {
		switch a := a.(type) {
		case terminal.CommandFinished:
			fmt.Printf("%s %s exit=%d took=%dms\n", a.Type(), a.CommandID, *a.ExitCode, *a.DurationMs)
		default:
			fmt.Printf("%s %+q\n", a.Type(), fmt.Sprintf("%+v", a))
		}
	}
	// Output:
	// terminal/commandDetectionAvailable "{}"
	// terminal/data "{Data:$ }"
	// terminal/data "{Data:ls /nope\r\n}"
	// terminal/commandExecuted "{CommandID:cmd-1 CommandLine:ls /nope Timestamp:1760000000000}"
	// terminal/data "{Data:ls: cannot access '/no}"
	// terminal/data "{Data:pe'\r\n}"
	// terminal/commandFinished cmd-1 exit=2 took=12ms
	// terminal/cwdChanged "{CWD:file:///home/dev/src}"
	// terminal/data "{Data:$ }"
}
