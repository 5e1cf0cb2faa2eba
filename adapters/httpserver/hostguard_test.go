package httpserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHostGuardAnswersOnlyLoopbackNamesOnALoopbackListener(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	cases := []struct {
		listen, host string
		want         int
	}{
		{"127.0.0.1:7681", "127.0.0.1:7681", http.StatusNoContent},
		{"127.0.0.1:7681", "localhost:7681", http.StatusNoContent},
		{"127.0.0.1:7681", "LOCALHOST.:9000", http.StatusNoContent}, // an ssh -L tunnel's port
		{"127.0.0.1:7681", "devbox.localhost:7681", http.StatusNoContent},
		{"127.0.0.1:7681", "[::1]:7681", http.StatusNoContent},
		{"127.0.0.1:7681", "127.0.0.1", http.StatusNoContent},
		{"localhost:7681", "localhost:7681", http.StatusNoContent},
		// A rebinding page: its own name, resolved to 127.0.0.1.
		{"127.0.0.1:7681", "attacker.example:7681", http.StatusMisdirectedRequest},
		{"127.0.0.1:7681", "127.0.0.1.attacker.example", http.StatusMisdirectedRequest},
		{"127.0.0.1:7681", "", http.StatusMisdirectedRequest},
		// Beyond loopback the daemon has TLS or --insecure: not guarded here.
		{"0.0.0.0:7681", "attacker.example:7681", http.StatusNoContent},
		{"192.0.2.7:7681", "shellgate.lan", http.StatusNoContent},
	}
	for _, c := range cases {
		t.Run(c.listen+" "+c.host, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
			r.Host = c.host
			w := httptest.NewRecorder()
			hostGuard(ok, c.listen).ServeHTTP(w, r)
			require.Equal(t, c.want, w.Code, w.Body.String())
			if c.want == http.StatusMisdirectedRequest {
				require.Contains(t, w.Body.String(), "answers only to loopback names")
			}
		})
	}
}
