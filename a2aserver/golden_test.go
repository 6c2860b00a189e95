package a2aserver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden wire transcripts in testdata/")

// goldenCase is one request whose exchange is kept as a transcript.
type goldenCase struct {
	name    string
	method  string
	path    string
	version string
	body    string
}

var goldenCases = []goldenCase{
	{"jsonrpc-1.0-send-message", "POST", "/agents/echo", "1.0",
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"golden-1","role":"ROLE_USER","parts":[{"text":"hello"}],"metadata":{"pactum":{"actor":"alice","correlationId":"corr-42"}}}}}`},
	{"jsonrpc-0.3-message-send", "POST", "/", "",
		`{"jsonrpc":"2.0","id":"legacy","method":"message/send","params":{"message":{"kind":"message","messageId":"golden-2","role":"user","parts":[{"kind":"text","text":"hello"}]}}}`},
	{"jsonrpc-1.0-rejected", "POST", "/agents/guarded", "1.0",
		`{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"golden-3","role":"ROLE_USER","parts":[{"text":"delete everything"}]}}}`},
	{"jsonrpc-version-not-supported", "POST", "/", "2.0",
		`{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"x"}}`},
	{"jsonrpc-task-not-found", "POST", "/", "1.0",
		`{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{"id":"no-such-task"}}`},
	{"rest-1.0-send-message", "POST", "/agents/echo/message:send", "1.0",
		`{"message":{"messageId":"golden-4","role":"ROLE_USER","parts":[{"text":"over rest"}]},"configuration":{"historyLength":0}}`},
	{"rest-1.0-task-not-found", "GET", "/tasks/no-such-task", "1.0", ""},
	{"rest-version-not-supported", "GET", "/tasks/no-such-task", "0.9", ""},
}

func TestGoldenTranscripts(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.BaseURL = "https://agents.example.com" })
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			var body *strings.Reader
			if gc.body != "" {
				body = strings.NewReader(gc.body)
			}
			var r rawResponse
			if body != nil {
				r = b.do(gc.method, gc.path, gc.version, body)
			} else {
				r = b.do(gc.method, gc.path, gc.version, nil)
			}
			got := transcript(gc, r)
			file := filepath.Join("testdata", gc.name+".txt")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGoldenTranscripts -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("transcript differs from %s (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", file, got, want)
			}
		})
	}
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
)

// transcript renders an exchange with generated ids and times replaced by
// stable placeholders, JSON bodies indented with sorted keys.
func transcript(gc goldenCase, r rawResponse) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "-- request --\n%s %s\n", gc.method, gc.path)
	if gc.version != "" {
		fmt.Fprintf(&sb, "A2A-Version: %s\n", gc.version)
	}
	if gc.body != "" {
		sb.WriteString("\n" + indentJSON([]byte(gc.body)) + "\n")
	}
	fmt.Fprintf(&sb, "-- response --\n%d %s\n", r.status, http.StatusText(r.status))
	keys := []string{"Content-Type", "A2A-Version"}
	sort.Strings(keys)
	for _, k := range keys {
		if v := r.header.Get(k); v != "" {
			fmt.Fprintf(&sb, "%s: %s\n", k, v)
		}
	}
	sb.WriteString("\n" + indentJSON(r.body) + "\n")
	out := sb.String()
	ids := map[string]string{}
	out = uuidRE.ReplaceAllStringFunc(out, func(s string) string {
		if _, ok := ids[s]; !ok {
			ids[s] = fmt.Sprintf("<id-%d>", len(ids)+1)
		}
		return ids[s]
	})
	return timeRE.ReplaceAllString(out, "<time>")
}

func indentJSON(data []byte) string {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return strings.TrimSpace(string(data))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(buf.String())
}
