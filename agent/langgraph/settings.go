package langgraph

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/endpoint"
)

// Output values of Settings.Output.
const (
	// OutputText answers with the text of the last AI message of the
	// graph's final state.
	OutputText = "text"
	// OutputState answers with the whole final state as a data part.
	OutputState = "state"
)

// Input values of Settings.Input.
const (
	// InputMessages sends the caller's text as one user message:
	// {"messages":[{"role":"user","content":TEXT}]}.
	InputMessages = "messages"
	// InputData sends the caller's first data part, a JSON object, as the
	// run's input as it is.
	InputData = "data"
)

// Defaults of Settings.
const (
	DefaultTimeout = 10 * time.Minute
)

// DefaultStreamModes are the stream modes asked for when Settings.StreamModes
// is empty: the state after each step, message chunks as the model writes
// them, and node updates (where interrupts show first).
var DefaultStreamModes = []string{"values", "messages-tuple", "updates"}

// streamModes are the modes the Agent Server API accepts.
var streamModes = []string{"values", "messages", "messages-tuple", "updates", "events", "tasks", "checkpoints", "debug", "custom"}

// Settings configures a langgraph runtime: the mapping under `langgraph:`
// in an agent's configuration.
//
//	agents:
//	  - name: researcher
//	    type: langgraph
//	    langgraph:
//	      url: http://127.0.0.1:2024
//	      assistant: agent
//	      api_key_env: LANGGRAPH_API_KEY
type Settings struct {
	// URL is the Agent Server's base URL (langgraph dev, langgraphjs dev
	// or a deployment), http or https, without credentials. Required.
	URL string `yaml:"url"`
	// Assistant is the assistant id or the graph id (a graph id names the
	// graph's default assistant) that runs. Required.
	Assistant string `yaml:"assistant"`
	// APIKeyEnv names the environment variable that holds the API key,
	// sent as the x-api-key header; the variable must be set when the
	// runtime is built. Default "": no key is sent.
	APIKeyEnv string `yaml:"api_key_env"`
	// OAuth2 gets every request's bearer token from an OAuth 2.0 client
	// credentials grant: token_url, client_id, client_secret_env,
	// scopes, audience, resource (docs/runtimes.md, "Client
	// credentials"). Sent as Authorization: Bearer, beside an x-api-key of
	// api_key_env if both are set (a deployment behind an OAuth gateway).
	// Default none.
	OAuth2 *clientcreds.Settings `yaml:"oauth2"`
	// StreamModes are the stream modes of each run. "values" and
	// "updates" are always added (the answer and interrupts come from
	// them); "messages-tuple" or "messages" make the model's output
	// arrive as artifact chunks. Default: values, messages-tuple,
	// updates.
	StreamModes []string `yaml:"stream_modes"`
	// Output is what the answer is: "text", the text of the last AI
	// message of the final state (the whole state as data when there is
	// none), or "state", the final state as a data part. Default "text".
	Output string `yaml:"output"`
	// Input is how the caller's message becomes the run's input:
	// "messages", the message as {"messages":[{"role":"user",
	// "content":TEXT}]} (TEXT: its text parts and data parts, as JSON
	// text, joined by blank lines), or "data", the message's first data
	// part (a JSON object) as it is. Default "messages".
	Input string `yaml:"input"`
	// Timeout bounds one attempt, from creating the thread to the end of
	// the run. When it expires the run is canceled on the server and the
	// attempt fails with a retryable timeout. Default 10m.
	Timeout time.Duration `yaml:"timeout"`
}

func (s Settings) withDefaults() Settings {
	if len(s.StreamModes) == 0 {
		s.StreamModes = slices.Clone(DefaultStreamModes)
	}
	for _, m := range []string{"values", "updates"} {
		if !slices.Contains(s.StreamModes, m) {
			s.StreamModes = append(s.StreamModes, m)
		}
	}
	if s.Output == "" {
		s.Output = OutputText
	}
	if s.Input == "" {
		s.Input = InputMessages
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	return s
}

// validate checks s after defaults, naming the offending field.
func (s Settings) validate() error {
	if s.URL == "" {
		return errors.New("url: required, e.g. http://127.0.0.1:2024")
	}
	if _, err := endpoint.CheckSetting(s.URL, "url", "use api_key_env"); err != nil {
		return err
	}
	if err := clientcreds.CheckWith(s.OAuth2, nil); err != nil {
		return err
	}
	if strings.TrimSpace(s.Assistant) == "" {
		return errors.New("assistant: required: the assistant id or graph id to run")
	}
	if s.APIKeyEnv != "" {
		v, ok := os.LookupEnv(s.APIKeyEnv)
		if !ok {
			return fmt.Errorf("api_key_env: environment variable %s is not set", s.APIKeyEnv)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return fmt.Errorf("api_key_env: the value of %s holds a line break or NUL", s.APIKeyEnv)
		}
	}
	for _, m := range s.StreamModes {
		if !slices.Contains(streamModes, m) {
			return fmt.Errorf("stream_modes: unknown mode %q (known: %s)", m, strings.Join(streamModes, ", "))
		}
	}
	switch s.Output {
	case OutputText, OutputState:
	default:
		return fmt.Errorf("output: must be %s or %s, not %q", OutputText, OutputState, s.Output)
	}
	switch s.Input {
	case InputMessages, InputData:
	default:
		return fmt.Errorf("input: must be %s or %s, not %q", InputMessages, InputData, s.Input)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("timeout: must be positive, got %s", s.Timeout)
	}
	return nil
}
