package push

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pactum/pactum/internal/netguard"
	"github.com/pactum/pactum/task"
)

func TestPushClientRefusesPrivateAddressesWhenDialing(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	resp, err := newPushClient(false).Post(srv.URL, "application/json", nil)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the guarded client reached a loopback server")
	}
	if !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("err = %v, want a netguard refusal", err)
	}
	resp, err = newPushClient(true).Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatalf("allowPrivate client: %v", err)
	}
	resp.Body.Close()
}

// nopStore satisfies task.Store for tests that never touch it, but for the
// Pusher's catch-up, which finds nothing owed.
type nopStore struct{ task.Store }

func (nopStore) PushBacklog(context.Context, task.PushBacklogParams) ([]task.PushBacklogItem, error) {
	return nil, nil
}

func TestPusherLifecycle(t *testing.T) {
	t.Parallel()
	coord, err := task.NewCoordinator(task.Options{Store: nopStore{}})
	if err != nil {
		t.Fatal(err)
	}
	p := New(coord, Options{})
	ctx := context.Background()
	if err := p.Stop(ctx); err != nil {
		t.Fatalf("stop before start: %v", err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err == nil {
		t.Fatal("a second Start succeeded")
	}
	for i := range 2 {
		if err := p.Stop(ctx); err != nil {
			t.Fatalf("stop #%d: %v", i+1, err)
		}
	}
}
