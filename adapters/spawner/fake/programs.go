package fake

import (
	"io"

	"github.com/shellgate/shellgate/domain/terminal"
)

// Print is a program that writes text and exits 0.
func Print(text string) Program {
	return func(p *Process) terminal.ExitStatus {
		if err := p.Emit(text); err != nil {
			return terminal.ExitedWith(1)
		}
		return terminal.ExitedWith(0)
	}
}

// Exit is a program that exits with code at once, printing nothing.
func Exit(code int) Program {
	return func(*Process) terminal.ExitStatus { return terminal.ExitedWith(code) }
}

// Cat is a program that copies its input to its output until input ends,
// then exits 0, like cat(1) with no arguments.
func Cat() Program {
	return func(p *Process) terminal.ExitStatus {
		buf := make([]byte, 4096)
		for {
			n, err := p.ReadInput(buf)
			if n > 0 {
				if p.Emit(string(buf[:n])) != nil {
					return terminal.ExitedWith(1)
				}
			}
			if err == io.EOF {
				return terminal.ExitedWith(0)
			}
		}
	}
}
