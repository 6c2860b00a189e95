package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

var errFake = errors.New("fake open failed")

func init() {
	store.Register("fake", store.Driver{
		Open: func(ctx context.Context, dsn string, opts store.Options) (task.Store, error) {
			if opts.Logger == nil {
				panic("nil logger reached the driver")
			}
			if strings.Contains(dsn, "fail") {
				return nil, errFake
			}
			if opts.SkipMigrate {
				return nil, errSkipped
			}
			return nil, nil
		},
		Migrate: func(ctx context.Context, dsn string, opts store.Options) (int, error) {
			if opts.Logger == nil {
				panic("nil logger reached the driver")
			}
			if strings.Contains(dsn, "fail") {
				return 0, errFake
			}
			return 2, nil
		},
		Validate: func(dsn string) error {
			if strings.Contains(dsn, "bad") {
				return errBadDSN
			}
			return nil
		},
	})
}

var errSkipped = errors.New("skip migrate reached the driver")

func TestOpenWithAndMigrate(t *testing.T) {
	t.Parallel()
	if _, err := store.OpenWith(t.Context(), "fake://x", store.Options{SkipMigrate: true}); !errors.Is(err, errSkipped) {
		t.Errorf("OpenWith(SkipMigrate) = %v, want the option passed to the driver", err)
	}
	if n, err := store.Migrate(t.Context(), "fake://x", nil); n != 2 || err != nil {
		t.Errorf("Migrate = %d, %v; want 2, nil", n, err)
	}
	if _, err := store.Migrate(t.Context(), "fake://fail", nil); !errors.Is(err, errFake) {
		t.Errorf("Migrate error not wrapped: %v", err)
	}
	if _, err := store.Migrate(t.Context(), "nope://x", nil); err == nil || !strings.Contains(err.Error(), "unknown scheme") {
		t.Errorf("Migrate on an unknown scheme: %v", err)
	}
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
	store.Register("Fake", store.Driver{
		Open:    func(context.Context, string, store.Options) (task.Store, error) { return nil, nil },
		Migrate: func(context.Context, string, store.Options) (int, error) { return 0, nil },
	})
}

func TestSchemes(t *testing.T) {
	t.Parallel()
	if got := store.Schemes(); len(got) != 1 || got[0] != "fake" {
		t.Errorf("Schemes() = %v, want [fake]", got)
	}
}

var errBadDSN = errors.New("bad dsn")

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := store.Validate("FAKE://good"); err != nil {
		t.Errorf("Validate of a good DSN: %v", err)
	}
	if err := store.Validate("fake://bad"); !errors.Is(err, errBadDSN) || !strings.Contains(err.Error(), "store: invalid fake data source name") {
		t.Errorf("Validate of a bad DSN = %v, want the driver's error, wrapped", err)
	}
	for _, dsn := range []string{"nope://x", "no-scheme"} {
		if err := store.Validate(dsn); err == nil {
			t.Errorf("Validate(%q) = nil, want an error", dsn)
		}
	}
}
