package store_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

var errFake = errors.New("fake open failed")

func init() {
	store.Register("fake", func(ctx context.Context, dsn string, logger *slog.Logger) (task.Store, error) {
		if logger == nil {
			panic("nil logger reached the driver")
		}
		if strings.Contains(dsn, "fail") {
			return nil, errFake
		}
		return nil, nil
	})
}

func TestOpen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dsn, err string
	}{
		{"fake://x", ""},
		{"FAKE://x", ""},
		{"fake://fail", "fake open failed"},
		{"nope://x", `unknown scheme "nope" in data source name (known schemes: fake;`},
		{"pactum.db", "has no scheme"},
		{"://x", "has no scheme"},
		{"user:secret@host", "user:xxxxx@host"},
	} {
		_, err := store.Open(t.Context(), tc.dsn, nil)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("Open(%q): %v", tc.dsn, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Open(%q) error %v, want one containing %q", tc.dsn, err, tc.err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) error leaks the password: %v", tc.dsn, err)
		}
	}
	if _, err := store.Open(t.Context(), "fake://fail", nil); !errors.Is(err, errFake) {
		t.Errorf("driver error not wrapped: %v", err)
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("registering a scheme twice did not panic")
		}
	}()
	store.Register("Fake", func(context.Context, string, *slog.Logger) (task.Store, error) { return nil, nil })
}

func TestSchemes(t *testing.T) {
	t.Parallel()
	if got := store.Schemes(); len(got) != 1 || got[0] != "fake" {
		t.Errorf("Schemes() = %v, want [fake]", got)
	}
}
