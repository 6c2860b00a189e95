package a2aagent

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/endpoint"
	"github.com/pactum/pactum/agent/internal/header"
)

// Transport values accepted by Settings.Transport.
const (
	// TransportAuto uses the interfaces the agent card lists, in the card's
	// order of preference.
	TransportAuto = "auto"
	// TransportJSONRPC uses the card's JSON-RPC interface only.
	TransportJSONRPC = "jsonrpc"
	// TransportREST uses the card's HTTP+JSON (REST) interface only.
	TransportREST = "rest"
)

// Defaults applied to a zero Settings field.
const (
	DefaultCardPath = "/.well-known/agent-card.json"
	DefaultTimeout  = 5 * time.Minute
)

// Settings configures an a2a runtime: the mapping under `a2a:` in an
// agent's configuration.
//
//	agents:
//	  - name: researcher
//	    type: a2a
//	    a2a:
//	      url: https://research.example.com
//	      headers:
//	        Authorization: Bearer ${RESEARCH_TOKEN}
//	      timeout: 10m
type Settings struct {
	// URL locates the remote agent: either its base URL, to which CardPath
	// is appended, or the URL of its agent card itself (a path ending in
	// ".json", used as is). http or https; credentials in the URL are
	// refused (use Headers). Required.
	URL string `yaml:"url"`
	// CardPath is where the agent card lives below URL. Ignored when URL
	// names the card itself. Default "/.well-known/agent-card.json".
	CardPath string `yaml:"card_path"`
	// Headers are added to every HTTP request to the agent, the card fetch
	// included. In values, ${VAR} is replaced by the environment variable
	// VAR when the runtime is built; naming an unset variable is an error.
	// Values are secrets: they are never logged or printed. Default none.
	Headers Headers `yaml:"headers"`
	// Transport picks the protocol binding: "auto" (the card's preference
	// among JSON-RPC and HTTP+JSON), "jsonrpc" or "rest". A binding the card
	// does not list is a permanent error. Default "auto".
	Transport string `yaml:"transport"`
	// Stream selects SendStreamingMessage (chunks pass through as they
	// arrive) over a blocking SendMessage. It has effect only when the card
	// declares streaming. Default: true when the card declares streaming.
	Stream *bool `yaml:"stream"`
	// Timeout bounds one attempt, card resolution included; when it
	// expires the attempt fails with a retryable timeout and the remote
	// task is canceled. Default 5m.
	Timeout time.Duration `yaml:"timeout"`
	// History sends the conversation's earlier messages along with the new
	// one when the remote agent does not already hold them (that is, unless
	// the message continues a remote task that asked for input). Their parts
	// come first, each marked with metadata "pactum.history" = {role,
	// messageId}. Default false: only the newest message is sent.
	History bool `yaml:"history"`
	// OAuth2 gets every request's bearer token (the card fetch included)
	// from an OAuth 2.0 client credentials grant: token_url, client_id,
	// client_secret_env, scopes, audience, resource (docs/runtimes.md,
	// "Client credentials"). Not with an Authorization header. Default
	// none.
	OAuth2 *clientcreds.Settings `yaml:"oauth2"`
}

// Headers are HTTP header names and values. They format as their names only,
// so that printing or logging Settings never reveals a value.
type Headers = header.Redacted

// withDefaults returns c with zero fields set to their defaults.
func (c Settings) withDefaults() Settings {
	if c.CardPath == "" {
		c.CardPath = DefaultCardPath
	}
	if c.Transport == "" {
		c.Transport = TransportAuto
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// validate checks c after defaults, naming the offending field.
func (c Settings) validate() error {
	if c.URL == "" {
		return errors.New("url: required")
	}
	if _, err := endpoint.Check(c.URL); err != nil {
		return err
	}
	if !strings.HasPrefix(c.CardPath, "/") {
		return fmt.Errorf("card_path: must start with /, got %q", c.CardPath)
	}
	switch c.Transport {
	case TransportAuto, TransportJSONRPC, TransportREST:
	default:
		return fmt.Errorf("transport: must be %s, %s or %s, not %q", TransportAuto, TransportJSONRPC, TransportREST, c.Transport)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("timeout: must be positive, got %s", c.Timeout)
	}
	if err := clientcreds.CheckWith(c.OAuth2, c.Headers); err != nil {
		return err
	}
	return header.CheckAll(c.Headers, "A2A", reservedHeaders)
}

// reservedHeaders are set by the protocol bindings themselves.
var reservedHeaders = []string{"Accept", "Connection", "Content-Length", "Content-Type", "Host", "Transfer-Encoding"}

// cardLocation splits the configured URL into the base and path that the
// card resolver joins.
func (c Settings) cardLocation() (base, path string) {
	u, err := url.Parse(c.URL)
	if err != nil || !strings.HasSuffix(u.Path, ".json") {
		return c.URL, c.CardPath
	}
	path = u.Path
	u.Path, u.RawPath = "", ""
	return u.String(), path
}

// displayURL is the configured URL without its query, for logs and
// descriptions: a query may carry a token.
func (c Settings) displayURL() string {
	return endpoint.Display(c.URL)
}
