package endpoint_test

import (
	"strings"
	"testing"

	"github.com/pactum/pactum/agent/internal/endpoint"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, err string
	}{
		{"http://localhost:8080/mcp", ""},
		{"https://agent.example.com/a2a?tenant=1", ""},
		{"HTTPS://agent.example.com", ""},
		{"ftp://localhost/x", `url: scheme must be http or https, not "ftp"`},
		{"localhost:8080", `url: scheme must be http or https, not "localhost"`},
		{"/relative", `url: scheme must be http or https, not ""`},
		{"http:///x", "url: missing host"},
		{"http://u:p@localhost/x", "url: credentials in the URL are not supported; use headers"},
		{"http://u@localhost/x", "url: credentials in the URL are not supported; use headers"},
		{"http://local host/", "url: parse "},
		{"http://[::1/", "url: parse "},
	}
	for _, tt := range tests {
		u, err := endpoint.Check(tt.raw)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("Check(%q) = %v, want no error", tt.raw, err)
		case tt.err == "" && u == nil:
			t.Errorf("Check(%q) returned no URL", tt.raw)
		case tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)):
			t.Errorf("Check(%q) = %v, want an error starting %q", tt.raw, err, tt.err)
		case tt.err != "" && u != nil:
			t.Errorf("Check(%q) returned a URL with its error", tt.raw)
		}
	}
}

func TestDisplay(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"https://agent.example.com/a2a":                   "https://agent.example.com/a2a",
		"https://agent.example.com/a2a?token=s3cret#frag": "https://agent.example.com/a2a",
		"http://user:pw@localhost:8080/mcp?key=s3cret":    "http://localhost:8080/mcp",
		"http://[::1/": "(invalid url)",
		"https://agent.example.com/path%20with%20space?x=1": "https://agent.example.com/path%20with%20space",
	}
	for raw, want := range tests {
		if got := endpoint.Display(raw); got != want {
			t.Errorf("Display(%q) = %q, want %q", raw, got, want)
		}
	}
}
