package node_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
)

// A mounted handler may outlive its node: after Stop, /readyz says the store
// is unavailable instead of crashing, and stopping again is safe.
func TestReadyzAfterStop(t *testing.T) {
	t.Parallel()
	src := fmt.Sprintf("store: sqlite://%s\nagents:\n  - name: echo\n    type: echo\n", filepath.Join(t.TempDir(), "p.db"))
	cfg, err := config.Parse([]byte(src), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv, err := node.New(ctx, cfg, ".", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	get := func(path string) int {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	if code := get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz while running = %d", code)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if code := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz after Stop = %d, want 503", code)
	}
	if code := get("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz after Stop = %d", code)
	}
}
