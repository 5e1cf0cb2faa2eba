package ports

// Screens makes the screen model of a pty terminal: what a terminal showing
// its output would show now, kept on the host so that a viewer who joins
// late, or comes back, is drawn the current screen rather than handed the
// raw history. The host makes one where the terminal's program enters the
// alternate screen and feeds it from that sequence on; a model's main
// screen is then blank, and a viewer's own (drawn from the scrollback)
// stands under the alternate one.
type Screens interface {
	NewScreen(cols, rows int) Screen
}

// Screen is one terminal's screen model. It is fed the terminal's output
// with the queries already taken out, and it never answers anything: it
// writes nothing anywhere. Its owner serialises every call.
type Screen interface {
	// Write feeds output.
	Write(text string)
	// Resize follows the terminal's window size.
	Resize(cols, rows int)
	// Serialize is a VT byte stream that draws the current screen on a
	// blank terminal of the screen's size: both screens when the alternate
	// one is shown, the scroll region, the modes a viewer's keys and
	// mouse depend on, the cursor.
	Serialize() string
	// Close lets go of the model.
	Close()
}
