package httpguard_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/httpguard"
)

// serveGuarded serves h behind a guard with opts on 127.0.0.1:0 and
// returns the address.
func serveGuarded(t *testing.T, opts httpguard.Options, h http.Handler) string {
	t.Helper()
	g, err := httpguard.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: g.Handler(h), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestStreamAfterBody: a response stream that lasts well past the read and
// write timeouts, after a request body or without one, keeps its request
// context and reaches its end.
func TestStreamAfterBody(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	addr := serveGuarded(t, httpguard.Options{ReadTimeout: timeout, WriteTimeout: timeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost { // a GET's empty body is left unread, as SSE handlers do
			if _, err := io.ReadAll(r.Body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		// Quiet for longer than both timeouts, then events.
		select {
		case <-time.After(8 * timeout):
		case <-r.Context().Done():
		}
		for i := range 5 {
			if r.Context().Err() != nil {
				fmt.Fprintf(w, "data: canceled\n\n")
				return
			}
			fmt.Fprintf(w, "data: %d\n\n", i)
			if err := http.NewResponseController(w).Flush(); err != nil {
				return
			}
			time.Sleep(timeout)
		}
		fmt.Fprintf(w, "data: done\n\n")
	}))
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"stream":true}`)
		}
		req, err := http.NewRequest(method, "http://"+addr+"/", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !strings.HasSuffix(string(got), "data: done\n\n") {
			t.Errorf("%s stream: %q, %v; want it to end with done", method, got, err)
		}
	}
}

// TestSlowResponseStarts: an ordinary response that starts after the write
// timeout (a blocking call) is still written: the deadline counts from the
// first write.
func TestSlowResponseStarts(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	addr := serveGuarded(t, httpguard.Options{ReadTimeout: timeout, WriteTimeout: timeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		time.Sleep(5 * timeout)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	for range 2 { // the second on the same (keep-alive) connection
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != `{"ok":true}` {
			t.Fatalf("slow response: %q, %v", body, err)
		}
	}
}

// TestSlowBody408: a body that stops arriving ends in 408 and a closed
// connection.
func TestSlowBody408(t *testing.T) {
	t.Parallel()
	addr := serveGuarded(t, httpguard.Options{ReadTimeout: 100 * time.Millisecond, WriteTimeout: time.Second}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n0123456789")
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Errorf("stalled body: %s (close %v), want 408 and Connection: close", resp.Status, resp.Close)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after the 408 the connection is not closed: %v", err)
	}
}

// TestSlowReaderCut: a client that stops reading loses its response after
// the write timeout, for an ordinary response and for a stream.
func TestSlowReaderCut(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		failed := make(chan error, 1)
		addr := serveGuarded(t, httpguard.Options{WriteTimeout: 200 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if stream {
				w.Header().Set("Content-Type", "text/event-stream")
			}
			chunk := []byte("data: " + strings.Repeat("x", 64<<10) + "\n\n")
			for {
				if _, err := w.Write(chunk); err != nil {
					failed <- err
					return
				}
				if stream {
					w.(http.Flusher).Flush()
				}
			}
		}))
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
		// Never read; a generous bound on this test's wait.
		select {
		case err := <-failed:
			if !isTimeout(err) {
				t.Errorf("stream %v: writing to a client that does not read ended with %v, want a timeout", stream, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("stream %v: still writing to a client that does not read after 30s", stream)
		}
		conn.Close()
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
