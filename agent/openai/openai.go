// Package openai calls a model behind any OpenAI-compatible chat
// completions API (type "openai"): Ollama, vLLM, llama.cpp's server,
// LM Studio or OpenAI itself, through the official client
// github.com/openai/openai-go/v3.
//
// Each attempt sends one chat completion request: the system prompt, then
// the task's history (user messages as the user role, agent messages as
// the assistant role; text parts as text, data parts as JSON text). A
// streamed answer is emitted as artifact chunks while it arrives; the
// result holds the whole text as one artifact, whose metadata records the
// token usage under "pactum".
//
// Whether a failed call is retried follows the HTTP runtimes' shared
// policy (internal/httpstatus): the client retries the retryable statuses
// and connection errors inside the attempt, honouring Retry-After and
// Retry-After-Ms, and the other statuses fail the task permanently.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/endpoint"
	"github.com/pactum/pactum/agent/internal/traced"
	"github.com/pactum/pactum/internal/httpstatus"
	"github.com/pactum/pactum/task"
)

// Type is the runtime type name used in configuration.
const Type = "openai"

// Defaults of Settings.
const (
	DefaultTimeout    = 5 * time.Minute
	DefaultMaxRetries = 2
)

// artifactName names the artifact an attempt produces.
const artifactName = "output"

// Inherit is the model alias that means the agent's own model.
const Inherit = "inherit"

func init() {
	agent.Register(Type, func(_ context.Context, spec agent.Spec) (agent.Agent, error) {
		var s Settings
		if err := spec.DecodeInto(&s); err != nil {
			return nil, err
		}
		return New(s)
	})
}

// Settings configures an openai runtime: the mapping under `openai:` in an
// agent's configuration.
type Settings struct {
	// BaseURL is the API's base URL, the part before /chat/completions,
	// e.g. http://127.0.0.1:11434/v1 for Ollama, without credentials (name
	// the key in APIKeyEnv). Required.
	BaseURL string `yaml:"base_url"`
	// Model is the model name the server knows, e.g. llama3.2. Required.
	Model string `yaml:"model"`
	// APIKeyEnv names the environment variable that holds the API key,
	// sent as a bearer token. The key is read when the runtime is built
	// and never appears in errors or logs. Default: "", no key is sent
	// (OPENAI_API_KEY is not read unless named here).
	APIKeyEnv string `yaml:"api_key_env"`
	// OAuth2 gets the bearer token from an OAuth 2.0 client credentials
	// grant instead of an API key (a model behind a gateway of the
	// organisation's identity provider): token_url, client_id,
	// client_secret_env, scopes, audience, resource (docs/runtimes.md,
	// "Client credentials"). Not with api_key_env. Default none.
	OAuth2 *clientcreds.Settings `yaml:"oauth2"`
	// Temperature is the sampling temperature, 0 to 2. Default: unset,
	// the server's own default.
	Temperature *float64 `yaml:"temperature"`
	// MaxTokens bounds the tokens of the answer (max_tokens). Default: 0,
	// unset, the server's own limit.
	MaxTokens int64 `yaml:"max_tokens"`
	// Timeout bounds one attempt: every call, its retries and reading the
	// whole answer. Default: 5m.
	Timeout time.Duration `yaml:"timeout"`
	// MaxRetries is the number of retries of a failed call inside one
	// attempt (connection errors and the retryable statuses); 0 disables
	// them. Default: 2. A negative value is an error.
	MaxRetries *int `yaml:"max_retries"`
	// System is the system prompt, sent first. Default: "", none.
	System string `yaml:"system"`
	// Stream asks the server to stream the answer, which is emitted as
	// artifact chunks while it arrives. Default: true.
	Stream *bool `yaml:"stream"`
	// Models maps a model alias (such as sonnet, haiku or inherit, the
	// names agent definitions use) to a model name the server knows; see
	// Runtime.ResolveModel. Default: none.
	Models map[string]string `yaml:"models"`
}

func (s Settings) withDefaults() Settings {
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxRetries == nil {
		n := DefaultMaxRetries
		s.MaxRetries = &n
	}
	if s.Stream == nil {
		t := true
		s.Stream = &t
	}
	return s
}

func (s Settings) validate() error {
	if s.BaseURL == "" {
		return errors.New("base_url: required, e.g. http://127.0.0.1:11434/v1")
	}
	if _, err := endpoint.CheckSetting(s.BaseURL, "base_url", "name the key's environment variable in api_key_env"); err != nil {
		return err
	}
	if s.OAuth2 != nil && s.APIKeyEnv != "" {
		return errors.New("oauth2: not with api_key_env: both give the bearer token")
	}
	if err := clientcreds.CheckWith(s.OAuth2, nil); err != nil {
		return err
	}
	if s.Model == "" {
		return errors.New("model: required, e.g. llama3.2")
	}
	if s.Temperature != nil && (*s.Temperature < 0 || *s.Temperature > 2) {
		return fmt.Errorf("temperature: must be between 0 and 2 (got %g)", *s.Temperature)
	}
	if s.MaxTokens < 0 {
		return fmt.Errorf("max_tokens: must not be negative (got %d)", s.MaxTokens)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("timeout: must not be negative (got %s)", s.Timeout)
	}
	if *s.MaxRetries < 0 {
		return fmt.Errorf("max_retries: must not be negative (got %d)", *s.MaxRetries)
	}
	for k, v := range s.Models {
		if k == "" || v == "" {
			return fmt.Errorf("models: alias %q: neither the alias nor the model may be empty", k)
		}
	}
	return nil
}

// Runtime sends one chat completion request per attempt.
type Runtime struct {
	s         Settings
	host      string
	transport *http.Transport
	client    openai.Client
}

var (
	_ agent.Agent            = (*Runtime)(nil)
	_ agent.Streamer         = (*Runtime)(nil)
	_ agent.MetadataProvider = (*Runtime)(nil)
	_ io.Closer              = (*Runtime)(nil)
)

// New returns a runtime for s, or an error naming the setting that is
// wrong. It reads the API key from the environment now.
func New(s Settings) (*Runtime, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	var key string
	if s.APIKeyEnv != "" {
		v, ok := os.LookupEnv(s.APIKeyEnv)
		if !ok || v == "" {
			return nil, fmt.Errorf("api_key_env: environment variable %s is not set", s.APIKeyEnv)
		}
		key = v
	}
	u, _ := url.Parse(s.BaseURL) // validated
	tr := http.DefaultTransport.(*http.Transport).Clone()
	r := &Runtime{s: s, host: u.Host, transport: tr}
	authed, err := clientcreds.Wrap(s.OAuth2, traced.Transport(tr))
	if err != nil {
		return nil, err
	}
	r.client = openai.NewClient(
		option.WithHTTPClient(&http.Client{Transport: authed}),
		option.WithBaseURL(strings.TrimRight(s.BaseURL, "/")+"/"),
		// Always set, so that OPENAI_API_KEY is not sent when no key
		// is configured: an empty key sends no Authorization header.
		option.WithAPIKey(key),
		option.WithMaxRetries(*s.MaxRetries),
		option.WithMiddleware(classify),
	)
	return r, nil
}

// classify makes the client's retry decision the shared HTTP policy's: it
// marks each response with the x-should-retry header the client obeys.
func classify(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp == nil {
		return resp, err
	}
	switch httpstatus.Classify(resp.StatusCode) {
	case httpstatus.Retry:
		resp.Header.Set("X-Should-Retry", "true")
	case httpstatus.Permanent:
		resp.Header.Set("X-Should-Retry", "false")
	}
	return resp, nil
}

// Metadata implements agent.MetadataProvider.
func (r *Runtime) Metadata() agent.Metadata {
	return agent.Metadata{
		Type:        Type,
		Description: fmt.Sprintf("model %s at %s", r.s.Model, r.host),
		Streaming:   *r.s.Stream,
		InputModes:  []string{"text/plain", "application/json"},
		OutputModes: []string{"text/plain"},
	}
}

// Close releases idle connections.
func (r *Runtime) Close() error {
	r.transport.CloseIdleConnections()
	return nil
}

// ResolveModel returns the model name for alias: the agent's own model
// for "" and "inherit" (a models entry for inherit is not consulted), the
// configured models entry for a known alias, else alias itself (taken as
// a model name).
func (r *Runtime) ResolveModel(alias string) string {
	if alias == "" || alias == Inherit {
		return r.s.Model
	}
	if m, ok := r.s.Models[alias]; ok {
		return m
	}
	return alias
}

// Invoke sends the conversation and returns the answer, streamed from the
// server when stream is set but emitted nowhere.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	return r.run(ctx, req, nil)
}

// Stream sends the conversation and, when stream is set, emits the answer
// as artifact chunks while it arrives. The result holds the whole text as
// the same artifact.
func (r *Runtime) Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	return r.run(ctx, req, emit)
}

// Usage is the token usage of one attempt, as recorded in the result
// artifact's metadata under "pactum".
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

func (r *Runtime) run(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	params, err := r.params(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.s.Timeout)
	defer cancel()
	id := answer.NewID()
	var (
		text  string
		model string
		usage *Usage
	)
	// A GenAI "chat" span (OpenTelemetry GenAI semantic conventions),
	// the parent of the HTTP request's own span.
	ctx, span := traced.Start(ctx, "github.com/pactum/pactum/agent/openai", "chat "+string(params.Model), trace.SpanKindClient,
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", string(params.Model)))
	if *r.s.Stream {
		text, model, usage, err = r.stream(ctx, params, answer.NewStream(emit, id, artifactName))
	} else {
		text, model, usage, err = r.complete(ctx, params)
	}
	if err == nil && span.IsRecording() {
		span.SetAttributes(attribute.String("gen_ai.response.model", model))
		if usage != nil {
			span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", usage.PromptTokens),
				attribute.Int64("gen_ai.usage.output_tokens", usage.CompletionTokens))
		}
	}
	traced.End(span, err)
	if err != nil {
		return nil, err
	}
	res := answer.Text(id, artifactName, text)
	meta := map[string]any{"model": model}
	if usage != nil {
		meta["usage"] = map[string]any{
			"prompt_tokens":     usage.PromptTokens,
			"completion_tokens": usage.CompletionTokens,
			"total_tokens":      usage.TotalTokens,
		}
	}
	res.Artifacts[0].Metadata = map[string]any{"pactum": meta}
	return res, nil
}

func (r *Runtime) complete(ctx context.Context, params openai.ChatCompletionNewParams) (string, string, *Usage, error) {
	c, err := r.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return "", "", nil, r.callError(ctx, err)
	}
	if len(c.Choices) == 0 {
		return "", "", nil, fmt.Errorf("openai %s: the response holds no choice", r.host)
	}
	var u *Usage
	if c.JSON.Usage.Valid() {
		u = &Usage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens, TotalTokens: c.Usage.TotalTokens}
	}
	return c.Choices[0].Message.Content, modelOr(c.Model, params.Model), u, nil
}

func (r *Runtime) stream(ctx context.Context, params openai.ChatCompletionNewParams, out *answer.Stream) (string, string, *Usage, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := r.client.Chat.Completions.NewStreaming(ctx, params)
	defer s.Close()
	var (
		b     strings.Builder
		model string
		u     *Usage
	)
	for s.Next() {
		c := s.Current()
		if c.Model != "" {
			model = c.Model
		}
		if c.JSON.Usage.Valid() && c.Usage.TotalTokens > 0 {
			u = &Usage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens, TotalTokens: c.Usage.TotalTokens}
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 || ch.Delta.Content == "" {
				continue
			}
			b.WriteString(ch.Delta.Content)
			if err := out.Write(ch.Delta.Content); err != nil {
				return "", "", nil, err
			}
		}
	}
	if err := s.Err(); err != nil {
		return "", "", nil, r.callError(ctx, err)
	}
	if err := out.Close(); err != nil {
		return "", "", nil, err
	}
	return b.String(), modelOr(model, params.Model), u, nil
}

func modelOr(got, sent string) string {
	if got != "" {
		return got
	}
	return sent
}

// callError classifies a failed call: an HTTP status through the shared
// policy (the client has already made its retries), anything else (no
// response, a broken stream) as retryable.
func (r *Runtime) callError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return fmt.Errorf("openai %s: no complete answer within %s: %w", r.host, r.s.Timeout, ctxErr)
		}
		return fmt.Errorf("openai %s: %w", r.host, ctxErr)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := strings.TrimSpace(apiErr.Message)
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		e := &task.Error{Code: httpstatus.Code(apiErr.StatusCode), Message: fmt.Sprintf("openai %s: %d: %s", r.host, apiErr.StatusCode, msg)}
		if httpstatus.Classify(apiErr.StatusCode) == httpstatus.Permanent {
			return task.Permanent(e)
		}
		return e
	}
	return fmt.Errorf("openai %s: %w", r.host, err)
}

// params builds the request: the system prompt, then the history.
func (r *Runtime) params(req *task.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: r.s.Model}
	if r.s.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(r.s.System))
	}
	history := req.History
	if len(history) == 0 {
		history = []task.Message{req.Message}
	}
	for i := range history {
		m := &history[i]
		text, err := content(m)
		if err != nil {
			return p, task.Permanent(fmt.Errorf("openai: history[%d]: %w", i, err))
		}
		if text == "" {
			continue
		}
		switch m.Role {
		case task.RoleAgent:
			p.Messages = append(p.Messages, openai.AssistantMessage(text))
		default:
			p.Messages = append(p.Messages, openai.UserMessage(text))
		}
	}
	if len(p.Messages) == 0 || (r.s.System != "" && len(p.Messages) == 1) {
		return p, task.Permanent(errors.New("openai: the conversation holds no text or data"))
	}
	if r.s.Temperature != nil {
		p.Temperature = openai.Float(*r.s.Temperature)
	}
	if r.s.MaxTokens > 0 {
		p.MaxTokens = openai.Int(r.s.MaxTokens)
	}
	return p, nil
}

// content returns a message's text and data parts as one text, parts
// separated by blank lines; data parts as compact JSON. File parts are
// not sent.
func content(m *task.Message) (string, error) {
	var parts []string
	for _, p := range m.Parts {
		switch p.Kind {
		case task.PartText:
			if p.Text != "" {
				parts = append(parts, p.Text)
			}
		case task.PartData:
			if len(p.Data) == 0 {
				continue
			}
			var v any
			if err := json.Unmarshal(p.Data, &v); err != nil {
				return "", fmt.Errorf("data part: %w", err)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return "", fmt.Errorf("data part: %w", err)
			}
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n\n"), nil
}
