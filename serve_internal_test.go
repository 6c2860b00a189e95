package pactum

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/syncbuf"
)

// announceTo sends Serve's listen line to w instead of stderr.
func announceTo(w *syncbuf.Buffer) Option {
	return optionFunc(func(s *settings) { s.announce = w })
}

// serveBriefly runs Serve with opts on a loopback listener until it
// is ready, then stops it, and returns the address it served on.
func serveBriefly(t *testing.T, opts ...Option) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	opts = append(opts, Store("sqlite://"+filepath.Join(t.TempDir(), "pactum.db")), Listener(ln),
		Func("greeter", func(_ context.Context, in string) (string, error) { return "hello, " + in, nil }))
	go func() { done <- Serve(ctx, opts...) }()
	addr := ln.Addr().String()
	for deadline := time.Now().Add(15 * time.Second); ; {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Serve not ready on %s within 15s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return")
	}
	return addr
}

// TestServeSaysWhereItListens: without a Logger, Serve writes one line
// saying where it listens and what; Quiet silences it; with a Logger the
// logger says it instead.
func TestServeSaysWhereItListens(t *testing.T) {
	t.Parallel()
	t.Run("default", func(t *testing.T) {
		t.Parallel()
		var out syncbuf.Buffer
		addr := serveBriefly(t, announceTo(&out))
		want := "pactum: serving greeter on http://" + addr + " "
		if got := out.String(); !strings.HasPrefix(got, want) || strings.Count(got, "\n") != 1 {
			t.Errorf("announced %q; want one line starting %q", got, want)
		}
	})
	t.Run("quiet", func(t *testing.T) {
		t.Parallel()
		var out syncbuf.Buffer
		serveBriefly(t, announceTo(&out), Quiet())
		if got := out.String(); got != "" {
			t.Errorf("Quiet Serve wrote %q", got)
		}
	})
	t.Run("logger", func(t *testing.T) {
		t.Parallel()
		var out, logs syncbuf.Buffer
		addr := serveBriefly(t, announceTo(&out), Logger(slog.New(slog.NewTextHandler(&logs, nil))))
		if got := out.String(); got != "" {
			t.Errorf("Serve with a Logger wrote %q beside it", got)
		}
		if !strings.Contains(logs.String(), `msg="pactum serving" addr=`+addr) {
			t.Errorf("the logger was not told where Serve listens:\n%s", logs.String())
		}
	})
}
