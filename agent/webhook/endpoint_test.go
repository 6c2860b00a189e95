package webhook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/webhook"
)

// TestURLCredentials: a url with credentials is refused like the a2a and
// mcp runtimes refuse it, naming the setting, and no error shows the
// password, not even one for a URL that does not parse.
func TestURLCredentials(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, want string }{
		{"https://user:pass@n8n.example.com/webhook/agent", "url: credentials in the URL are not supported; use headers"},
		{"https://user:pass@[::1/webhook/agent", "url: parse error: "},
		{"https://user:pass@n8n.example.com:x/webhook/agent", "url: parse error: "},
	} {
		_, err := agent.New(context.Background(), agenttest.Spec(t, "webhook", "url: '"+tt.url+"'\nallow_private: true"))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "pass") {
			t.Errorf("url %s: err = %v, want one containing %q and not the password", tt.url, err, tt.want)
		}
		if _, err := webhook.New(webhook.Settings{URL: tt.url}); err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "pass") {
			t.Errorf("New with url %s: err = %v, want %q… without the password", tt.url, err, tt.want)
		}
	}
}
