package mcpagent

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/endpoint"
	"github.com/pactum/pactum/agent/internal/header"
	"github.com/pactum/pactum/agent/internal/procgroup"
)

// Defaults of Settings.
const (
	DefaultRestartBackoff    = time.Second
	DefaultMaxRestartBackoff = 30 * time.Second
)

// Settings configures an mcp runtime: the mapping under `mcp:` in an
// agent's configuration. Exactly one of Command (a server on standard
// input and output) and URL (a server over streamable HTTP) is set.
//
//	agents:
//	  - name: echo
//	    type: mcp
//	    mcp:
//	      command: npx
//	      args: ["-y", "@modelcontextprotocol/server-everything"]
//	      tool: echo
type Settings struct {
	// Command is the program that runs the MCP server, which speaks MCP on
	// its standard input and output. A program without a slash is looked
	// up in PATH; one with a slash is relative to Dir. Default: none.
	Command string `yaml:"command"`
	// Args are the program's arguments, passed as they are. Only with
	// Command. Default: none.
	Args []string `yaml:"args"`
	// Env sets environment variables of the server. A value may reference
	// pactum's own environment as ${VAR}; an unset VAR is a configuration
	// error. Only with Command. Default: none.
	Env map[string]string `yaml:"env"`
	// InheritEnv passes pactum's environment on to the server, under Env.
	// When false the server sees Env only (add PATH if it needs one). Only
	// with Command. Default: true.
	InheritEnv *bool `yaml:"inherit_env"`
	// Dir is the server's working directory. In configuration a relative
	// Dir is relative to the configuration file's directory. Only with
	// Command. Default: that directory (in Go: the current directory).
	Dir string `yaml:"dir"`

	// URL is the MCP endpoint of a streamable-HTTP server, http or https.
	// Credentials in the URL are refused (use Headers). Default: none.
	URL string `yaml:"url"`
	// Headers are sent with every HTTP request to the server. A value may
	// reference pactum's environment as ${VAR}; values never appear in
	// errors or logs. Only with URL. Default: none.
	Headers Headers `yaml:"headers"`
	// OAuth2 gets every request's bearer token from an OAuth 2.0 client
	// credentials grant: token_url, client_id, client_secret_env,
	// scopes, audience, resource (docs/runtimes.md, "Client
	// credentials"); streamable HTTP only, not with an Authorization
	// header. Default none.
	OAuth2 *clientcreds.Settings `yaml:"oauth2"`

	// Tool is the name of the tool each attempt calls. Required.
	Tool string `yaml:"tool"`
	// Argument names the tool argument that receives the message text when
	// the message carries no JSON data part. Default: the tool's only
	// required argument not set by Arguments, if that is a string.
	Argument string `yaml:"argument"`
	// Arguments are fixed tool arguments; the message's own (its data part,
	// or its text under Argument) are merged over them, key by key.
	// Default: none.
	Arguments map[string]any `yaml:"arguments"`

	// RestartBackoff is the wait before starting a server (or reconnecting
	// to one) again after the second failure in a row, doubled for each
	// further failure. The first restart is immediate. Default: 1s.
	RestartBackoff time.Duration `yaml:"restart_backoff"`
	// MaxRestartBackoff caps the wait between restarts. Default: 30s, or
	// RestartBackoff when that is longer.
	MaxRestartBackoff time.Duration `yaml:"max_restart_backoff"`
}

// Headers are HTTP header names and values. They format as their names
// only, so that printing or logging Settings never reveals a value.
type Headers = header.Redacted

func (s Settings) withDefaults() Settings {
	if s.RestartBackoff == 0 {
		s.RestartBackoff = DefaultRestartBackoff
	}
	if s.MaxRestartBackoff == 0 {
		s.MaxRestartBackoff = max(DefaultMaxRestartBackoff, s.RestartBackoff)
	}
	return s
}

// reservedHeaders are set by the streamable-HTTP transport itself.
var reservedHeaders = []string{
	"Accept", "Connection", "Content-Length", "Content-Type", "Host", "Last-Event-Id",
	"Mcp-Protocol-Version", "Mcp-Session-Id", "Transfer-Encoding",
}

// validate checks s after defaults, naming the offending field. New
// reports environment errors the same way.
func (s Settings) validate() error {
	switch {
	case s.Command == "" && s.URL == "":
		return errors.New("command or url: one is required: the program that runs a stdio MCP server, or the URL of a streamable-HTTP one")
	case s.Command != "" && s.URL != "":
		return errors.New("command and url: set one, not both")
	case s.OAuth2 != nil && s.URL == "":
		return errors.New("oauth2: for a streamable-HTTP server (url); a stdio server gets no token")
	}
	if s.Command != "" {
		if strings.TrimSpace(s.Command) == "" {
			return errors.New("command: must not be blank")
		}
		if len(s.Headers) > 0 {
			return errors.New("headers: only with url")
		}
		if err := procgroup.CheckSettings(s.Env, s.Dir); err != nil {
			return err
		}
	} else {
		switch {
		case len(s.Args) > 0:
			return errors.New("args: only with command")
		case len(s.Env) > 0:
			return errors.New("env: only with command")
		case s.InheritEnv != nil:
			return errors.New("inherit_env: only with command")
		case s.Dir != "":
			return errors.New("dir: only with command")
		}
		if _, err := endpoint.Check(s.URL); err != nil {
			return err
		}
		if err := header.CheckAll(s.Headers, "MCP", reservedHeaders); err != nil {
			return err
		}
		if err := clientcreds.CheckWith(s.OAuth2, s.Headers); err != nil {
			return err
		}
	}
	if strings.TrimSpace(s.Tool) == "" {
		return errors.New("tool: required: the name of the tool to call")
	}
	if s.Argument != "" && strings.TrimSpace(s.Argument) == "" {
		return errors.New("argument: must not be blank")
	}
	if s.RestartBackoff < 0 {
		return fmt.Errorf("restart_backoff: must not be negative (got %s)", s.RestartBackoff)
	}
	if s.MaxRestartBackoff < s.RestartBackoff {
		return fmt.Errorf("max_restart_backoff: must not be less than restart_backoff (%s < %s)", s.MaxRestartBackoff, s.RestartBackoff)
	}
	return nil
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// displayURL is the configured URL without its query, for errors, logs and
// descriptions: a query may carry a token.
func (s Settings) displayURL() string {
	return endpoint.Display(s.URL)
}

// server names the server in errors and logs: the program, or the URL
// without its query.
func (s Settings) server() string {
	if s.Command != "" {
		return s.Command
	}
	return s.displayURL()
}
