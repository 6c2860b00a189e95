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

// TestCheckSetting: errors name the given setting, say what to use
// instead of credentials, and never show the URL: not its password, even
// when it does not parse, nor its path or query.
func TestCheckSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, err string
	}{
		{"https://llm.example.com/v1", ""},
		{"ftp://llm.example.com/v1", `base_url: scheme must be http or https, not "ftp"`},
		{"https:///v1", "base_url: missing host"},
		{"https://user:pass@llm.example.com/v1", "base_url: credentials in the URL are not supported; name the key in api_key_env"},
		{"https://user:pass@[::1/v1", "base_url: parse error: missing ']' in host"},
		{"https://user:pass@llm.example.com:x/v1", "base_url: parse error: "},
		{"https://user:pass@llm.example.com/v%zz", "base_url: parse error: "},
		{"https://llm.example.com:x/secret-path?token=s3cret", "base_url: parse error: "},
	}
	for _, tt := range tests {
		u, err := endpoint.CheckSetting(tt.raw, "base_url", "name the key in api_key_env")
		switch {
		case tt.err == "" && (err != nil || u == nil):
			t.Errorf("CheckSetting(%q) = %v, %v; want the URL", tt.raw, u, err)
		case tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)):
			t.Errorf("CheckSetting(%q) = %v, want an error starting %q", tt.raw, err, tt.err)
		case tt.err != "" && u != nil:
			t.Errorf("CheckSetting(%q) returned a URL with its error", tt.raw)
		case err != nil && (strings.Contains(err.Error(), "pass") || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "secret-path")):
			t.Errorf("CheckSetting(%q) = %v: shows the URL's secrets", tt.raw, err)
		}
	}
	if _, err := endpoint.Check("http://u:pass@[::1/"); err == nil || strings.Contains(err.Error(), "pass") {
		t.Errorf("Check of an unparsable URL with a password = %v, want an error without it", err)
	}
}
