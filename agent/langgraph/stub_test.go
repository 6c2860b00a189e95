package langgraph

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// newStub serves h on loopback for tests of what the runtime does with
// answers the real server does not give on demand (statuses, cut streams).
func newStub(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
