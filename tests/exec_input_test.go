package tests

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// endless reads as s over and over, for ever.
type endless string

func (e endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], e)
	}
	return n, nil
}

func TestExecForwardsPipedInputByteForByteAndEndsIt(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	execArgs := func(args ...string) []string {
		return append(append([]string{"exec"}, d.remoteArgs()...), args...)
	}

	// A ^C and a byte that is not UTF-8 are data in a file: they arrive as
	// they are, and the end of the file ends od's input.
	res := cliIn(t, nil, strings.NewReader("a\x03\xffb"), execArgs("--", "od", "-An", "-tx1")...)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "61 03 ff 62", strings.TrimSpace(res.stdout))

	// More than every buffer on the way holds: each byte arrives once, in
	// order.
	data := make([]byte, 8<<20)
	_, _ = rand.Read(data)
	sum := sha256.Sum256(data)
	res = cliIn(t, nil, bytes.NewReader(data), execArgs("--", "sha256sum")...)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, hex.EncodeToString(sum[:])+"  -\n", res.stdout)

	// A command that stops reading and exits ends exec, with its code;
	// the rest of the input is dropped.
	res = cliIn(t, nil, endless("y\n"), execArgs("--", "head", "-n", "2")...)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "y\ny\n", res.stdout)

	// No input at all (/dev/null) is an input that ends at once.
	res = cliIn(t, nil, nil, execArgs("--", "sh", "-c", "cat; echo cat-ended")...)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "cat-ended\n", res.stdout)

	// On a pty the end is typed: Ctrl-D after the last line, which has no
	// newline, so twice.
	res = cliIn(t, nil, strings.NewReader("hello"), execArgs("--pty", "--", "wc", "-c")...)
	require.Equal(t, 0, res.code, res.stderr)
	require.True(t, strings.HasSuffix(res.stdout, "5\r\n"), "%q", res.stdout)

	list := cli(t, nil, append([]string{"ls"}, d.remoteArgs()...)...)
	require.Equal(t, "no terminals\n", list.stderr, "every terminal was disposed of")
}
