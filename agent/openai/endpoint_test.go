package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
)

// TestBaseURLCredentials: a base_url with credentials is refused like the
// a2a and mcp runtimes refuse a url with them, naming the setting, and no
// error shows the password, not even one for a URL that does not parse.
func TestBaseURLCredentials(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, want string }{
		{"https://user:pass@llm.example.com/v1", "base_url: credentials in the URL are not supported; name the key's environment variable in api_key_env"},
		{"https://user:pass@[::1/v1", "base_url: parse error: "},
		{"https://user:pass@llm.example.com:x/v1", "base_url: parse error: "},
	} {
		_, err := agent.New(context.Background(), agenttest.Spec(t, "openai", "base_url: '"+tt.url+"'\nmodel: m"))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "pass") {
			t.Errorf("base_url %s: err = %v, want one containing %q and not the password", tt.url, err, tt.want)
		}
	}
}
