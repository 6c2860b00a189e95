package cli_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestConfigCheckReportsEveryError: one run of config check names every
// problem of a file, one per line in file order, those parsing finds and
// those only building the runtimes finds (an unknown runtime type, a
// runtime's own settings, a webhook at a loopback address), not only the
// first ones.
func TestConfigCheckReportsEveryError(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "pactum.yaml")
	writeFile(t, file, `agents:
  - name: a
    type: exec
    timeout: banana
    exec:
      comand: ["echo"]
  - name: b
    type: webhook
    retry:
      max_attempts: -3
    webhook:
      url: http://127.0.0.1:8080/hook
  - name: c
    type: nosuch
    timeout: 5q
  - name: d
    type: exec
    exec:
      command: ["echo"]
      kill_grace: zz
`)
	want := []string{
		`:4:14: agents[0].timeout: invalid duration "banana"`,
		`:6:7: agents[0].exec.comand: unknown field "comand"`,
		`:10:21: agents[1].retry.max_attempts: -3 out of range`,
		`:12:12: agents[1].webhook.url: host 127.0.0.1: refusing to connect to 127.0.0.1, a loopback address; set allow_private: true`,
		`:14:11: agents[2].type: unknown runtime type "nosuch"`,
		`:15:14: agents[2].timeout: invalid duration "5q"`,
		`:20:19: agents[3].exec.kill_grace: invalid duration "zz"`,
	}
	code, stdout, stderr := runMain("config", "check", file)
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want exit 1 and nothing on stdout", code, stdout)
	}
	lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(stderr, "pactum: "), "\n"), "\n")
	if len(lines) != len(want) {
		t.Errorf("%d lines; want %d, one per problem:\n%s", len(lines), len(want), stderr)
	}
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], file+w) {
			t.Errorf("line %d does not start with %q:\n%s", i+1, file+w, stderr)
		}
	}
}

// TestConfigCheckWebhookPrivate: a webhook at a loopback address, by
// literal or by a name that resolves only to loopback, is a configuration
// error at its url unless allow_private is set; a public one is not (no
// connection is made at check time).
func TestConfigCheckWebhookPrivate(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	for _, tc := range []struct {
		name, url, extra, want string
	}{
		{"loopback literal", srv.URL + "/hook", "", "127.0.0.1, a loopback address"},
		{"localhost", "http://localhost:" + port + "/hook", "", "a loopback address"},
		{"private literal", "http://10.0.0.7/hook", "", "10.0.0.7, a private address"},
		{"loopback allowed", srv.URL + "/hook", "\n      allow_private: true", ""},
		{"public", "https://93.184.216.34/hook", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "pactum.yaml")
			writeFile(t, file, fmt.Sprintf("agents:\n  - name: hook\n    type: webhook\n    webhook:\n      url: %s%s\n", tc.url, tc.extra))
			out, err := run(t, "config", "check", file)
			if tc.want == "" {
				if err != nil || !strings.HasPrefix(out, file+": OK (") {
					t.Fatalf("config check: %v, printed %q; want OK", err, out)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), file+":5:12: agents[0].webhook.url: ") ||
				!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "allow_private: true") {
				t.Errorf("config check: %v; want an error at %s:5:12 (the url) saying %q and how to allow it", err, file, tc.want)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("config check called the webhook %d times", n)
	}
}
