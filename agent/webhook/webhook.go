// Package webhook calls an agent behind an HTTP endpoint (type "webhook"):
// an n8n webhook-triggered workflow, or any service that takes a JSON POST
// and answers with JSON, text or a stream.
//
// Each attempt sends one request (retried inside the attempt on connection
// errors and retryable statuses: 5xx but 501 and 505; 408, 423, 425, 429)
// whose default body is what n8n's chat trigger and AI
// agent nodes expect. The answer is read from JSON, plain text, server-sent
// events or newline-delimited JSON; the last two are streamed as artifact
// chunks while they arrive.
//
// By default the runtime refuses to connect to loopback, private, link-local
// and unspecified addresses. The check runs on the address actually dialed,
// after DNS resolution, so a name that resolves (or later re-resolves) to
// such an address is refused too.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/endpoint"
	"github.com/pactum/pactum/agent/internal/tmpl"
	"github.com/pactum/pactum/agent/internal/traced"
	"github.com/pactum/pactum/internal/backoff"
	"github.com/pactum/pactum/internal/httpstatus"
	"github.com/pactum/pactum/internal/netguard"
	"github.com/pactum/pactum/task"
)

// Type is the runtime type name used in configuration.
const Type = "webhook"

// Defaults of Settings.
const (
	DefaultMethod           = http.MethodPost
	DefaultTimeout          = 60 * time.Second
	DefaultMaxAttempts      = 3
	DefaultInitialBackoff   = 200 * time.Millisecond
	DefaultMaxBackoff       = 5 * time.Second
	DefaultMaxResponseBytes = 4 << 20
)

// artifactName names the artifact an attempt produces.
const artifactName = "output"

// excerptBytes bounds the part of an error response quoted in errors.
const excerptBytes = 512

// defaultAnswers are tried in order when no answer pointer is set: the
// fields n8n's AI agent and common agent services put their reply in.
var defaultAnswers = []answer.Pointer{
	answer.MustPointer("/output"),
	answer.MustPointer("/text"),
	answer.MustPointer("/answer"),
	answer.MustPointer("/response"),
}

// chunkFields are the fields a streamed JSON event may carry its text in:
// "content" is n8n's streaming format ({"type":"item","content":"…"}),
// "delta" that of several LLM services.
var chunkFields = []string{"text", "content", "output", "answer", "response", "delta"}

func init() {
	agent.Register(Type, func(ctx context.Context, spec agent.Spec) (agent.Agent, error) {
		var s Settings
		if err := spec.DecodeInto(&s); err != nil {
			return nil, err
		}
		r, err := New(s)
		if err != nil {
			return nil, err
		}
		if err := r.checkDestination(ctx); err != nil {
			_ = r.Close()
			return nil, err
		}
		return r, nil
	})
}

// destinationLookup bounds the name lookup of checkDestination.
const destinationLookup = 3 * time.Second

// checkDestination refuses, when the agent is built from configuration
// (pactum serve, pactum config check), a URL whose host can only reach
// loopback, private or link-local addresses without allow_private: such an
// agent would fail every task at run time (the dialer's guard refuses
// them), so it is a configuration error. The dialer's guard still judges
// every address actually dialed.
func (r *Runtime) checkDestination(ctx context.Context) error {
	if r.s.AllowPrivate {
		return nil
	}
	u, _ := url.Parse(r.s.URL) // validated by New
	ctx, cancel := context.WithTimeout(ctx, destinationLookup)
	defer cancel()
	err := netguard.CheckHost(ctx, nil, u.Hostname(), strings.HasPrefix(u.Host, "["))
	var blocked *netguard.BlockedError
	if errors.As(err, &blocked) {
		return fmt.Errorf("url: host %s: %w; set allow_private: true in the agent's webhook settings to allow loopback, private and link-local destinations", u.Hostname(), blocked)
	}
	if err != nil {
		return fmt.Errorf("url: %w", err)
	}
	return nil
}

// Settings configures a webhook runtime: the mapping under `webhook:` in an
// agent's configuration.
type Settings struct {
	// URL is the endpoint, http or https, without credentials (send them
	// in Headers). Required.
	URL string `yaml:"url"`
	// Method is the HTTP method: GET (sent without a body), POST, PUT,
	// PATCH or DELETE. Default: POST.
	Method string `yaml:"method"`
	// Headers are sent with every request. A value may reference pactum's
	// environment as ${VAR} (an unset VAR is a configuration error), so
	// secrets stay out of the file; values never appear in errors or logs.
	// Default: none (Content-Type, Accept and User-Agent are set unless
	// given here).
	Headers map[string]string `yaml:"headers"`
	// OAuth2 gets every request's bearer token from an OAuth 2.0 client
	// credentials grant: token_url, client_id, client_secret_env,
	// scopes, audience, resource (docs/runtimes.md, "Client
	// credentials"). Not with an Authorization header; the token endpoint is
	// reached under the same destination check as the URL. Default none.
	OAuth2 *clientcreds.Settings `yaml:"oauth2"`
	// Body is a Go text/template producing the JSON request body, over
	// .Input, .TaskID, .ContextID, .Attempt, .Action, .Actor, .Data (JSON
	// of the first data part, or null), .Message and .Metadata; the
	// function json quotes a value: {"q": {{json .Input}}}. Default: the
	// n8n-compatible payload {"chatInput", "sessionId" (the context ID),
	// "taskId", "contextId", "action", "actor", "attempt", "message",
	// "metadata"}.
	Body string `yaml:"body"`
	// Timeout bounds each HTTP call, reading the whole response included.
	// Default: 60s.
	Timeout time.Duration `yaml:"timeout"`
	// Retry governs retries inside one attempt.
	Retry Retry `yaml:"retry"`
	// Answer is a JSON pointer (RFC 6901) to the answer in a JSON response,
	// and to the text in each streamed JSON event. Default: the first of
	// /output, /text, /answer, /response present in the response (also
	// inside a one-element array, as n8n returns), else the whole response;
	// for streamed events the first string among text, content, output,
	// answer, response and delta.
	Answer string `yaml:"answer"`
	// InputRequired is a JSON pointer (RFC 6901, e.g. "/needs_input") to a
	// boolean in a JSON response, looked up in the same value as Answer:
	// without Answer, inside a one-element array (n8n's single item). When
	// it is true the endpoint is asking for input: the answer becomes the
	// agent's question and the task waits in input_required for the
	// caller's reply, which is sent as the message of the next call. False,
	// null or nothing there is an ordinary answer; another value fails the
	// task permanently. Streamed responses (server-sent events,
	// newline-delimited JSON, several JSON documents) never ask. Default:
	// "", the endpoint never asks.
	InputRequired string `yaml:"input_required"`
	// AllowPrivate allows loopback, private, link-local and unspecified
	// destination addresses, e.g. an n8n on localhost. Default: false.
	AllowPrivate bool `yaml:"allow_private"`
	// MaxResponseBytes bounds a response body; a larger one fails the
	// attempt permanently. Default: 4194304 (4 MiB).
	MaxResponseBytes int `yaml:"max_response_bytes"`
	// Role is the agent definition the agent serves, when it serves one
	// (set by the server, not in configuration): its role body, tools and
	// model reach a body template as .System, .Tools and .Model, and the
	// default body as system, tools and model.
	Role *agent.Role `yaml:"-"`
}

// Retry governs the retries of one attempt's HTTP call. Connection errors,
// timeouts and the statuses the HTTP runtimes' shared policy calls
// retryable (5xx but 501 and 505; 408, 423, 425, 429) are retried with
// exponential backoff and jitter (a Retry-After header is honoured up to
// MaxBackoff); the other non-2xx statuses fail the task permanently. When the retries run out the
// attempt fails and the task's own retry policy takes over.
type Retry struct {
	// MaxAttempts is the number of calls per attempt, the first included;
	// 1 disables retries. Default: 3.
	MaxAttempts int `yaml:"max_attempts"`
	// InitialBackoff is the wait before the first retry, doubled for each
	// later one. Default: 200ms.
	InitialBackoff time.Duration `yaml:"initial_backoff"`
	// MaxBackoff caps the wait between calls. Default: 5s, or
	// InitialBackoff when that is longer.
	MaxBackoff time.Duration `yaml:"max_backoff"`
}

func (s Settings) withDefaults() Settings {
	if s.Method == "" {
		s.Method = DefaultMethod
	}
	s.Method = strings.ToUpper(s.Method)
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Retry.MaxAttempts == 0 {
		s.Retry.MaxAttempts = DefaultMaxAttempts
	}
	if s.Retry.InitialBackoff == 0 {
		s.Retry.InitialBackoff = DefaultInitialBackoff
	}
	if s.Retry.MaxBackoff == 0 {
		s.Retry.MaxBackoff = max(DefaultMaxBackoff, s.Retry.InitialBackoff)
	}
	if s.MaxResponseBytes == 0 {
		s.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return s
}

// validate checks settings that need no parsing; New reports template,
// pointer and environment errors the same way, naming the field.
func (s Settings) validate() error {
	if s.URL == "" {
		return errors.New("url: required, e.g. https://n8n.example.com/webhook/my-agent")
	}
	if err := clientcreds.CheckWith(s.OAuth2, s.Headers); err != nil {
		return err
	}
	if _, err := endpoint.Check(s.URL); err != nil {
		return err
	}
	if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, s.Method) {
		return fmt.Errorf("method: must be GET, POST, PUT, PATCH or DELETE (got %q)", s.Method)
	}
	for k := range s.Headers {
		if !validHeaderName(k) {
			return fmt.Errorf("headers: invalid header name %q", k)
		}
	}
	if s.Timeout < 0 {
		return fmt.Errorf("timeout: must not be negative (got %s)", s.Timeout)
	}
	if s.Retry.MaxAttempts < 0 {
		return fmt.Errorf("retry.max_attempts: must not be negative (got %d)", s.Retry.MaxAttempts)
	}
	if s.Retry.InitialBackoff < 0 {
		return fmt.Errorf("retry.initial_backoff: must not be negative (got %s)", s.Retry.InitialBackoff)
	}
	if s.Retry.MaxBackoff < s.Retry.InitialBackoff {
		return fmt.Errorf("retry.max_backoff: must not be less than retry.initial_backoff (%s < %s)", s.Retry.MaxBackoff, s.Retry.InitialBackoff)
	}
	if s.MaxResponseBytes < 0 {
		return fmt.Errorf("max_response_bytes: must not be negative (got %d)", s.MaxResponseBytes)
	}
	return nil
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// Runtime calls one HTTP endpoint per attempt.
type Runtime struct {
	s         Settings
	host      string // for errors and metadata; the URL may hold a secret
	header    http.Header
	body      *tmpl.Template // nil: the default payload
	answer    answer.Pointer
	hasAnswer bool
	ask       *answer.Pointer // input_required; nil when not set
	transport *http.Transport
	client    *http.Client
}

var (
	_ agent.Agent            = (*Runtime)(nil)
	_ agent.Streamer         = (*Runtime)(nil)
	_ agent.MetadataProvider = (*Runtime)(nil)
	_ io.Closer              = (*Runtime)(nil)
)

// New returns a runtime for s, or an error naming the setting that is
// wrong. It expands ${VAR} references in Headers now, from the current
// environment.
func New(s Settings) (*Runtime, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(s.URL) // validated
	r := &Runtime{s: s, host: u.Host, header: http.Header{}}
	r.header.Set("User-Agent", "pactum")
	r.header.Set("Accept", "application/json, text/event-stream, application/x-ndjson, text/plain;q=0.9, */*;q=0.5")
	if s.Method != http.MethodGet {
		r.header.Set("Content-Type", "application/json")
	}
	for k, v := range s.Headers {
		ev, err := tmpl.ExpandEnv(v, os.LookupEnv)
		if err != nil {
			return nil, fmt.Errorf("headers.%s: %w", k, err)
		}
		if strings.ContainsAny(ev, "\r\n\x00") {
			return nil, fmt.Errorf("headers.%s: the value holds a line break or NUL", k)
		}
		r.header.Set(k, ev)
	}
	if s.Body != "" {
		t, err := tmpl.Parse("body", s.Body)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		r.body = t
	}
	p, err := answer.ParsePointer(s.Answer)
	if err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	r.answer, r.hasAnswer = p, s.Answer != ""
	if s.InputRequired != "" {
		p, err := answer.ParsePointer(s.InputRequired)
		if err != nil {
			return nil, fmt.Errorf("input_required: %w", err)
		}
		r.ask = &p
	}

	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if !s.AllowPrivate {
		dialer.Control = netguard.Control
	}
	r.transport = &http.Transport{
		// No proxy: the destination check must see the real destination.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	authed, err := clientcreds.Wrap(s.OAuth2, traced.Transport(r.transport))
	if err != nil {
		return nil, err
	}
	r.client = &http.Client{Transport: authed}
	return r, nil
}

// Metadata implements agent.MetadataProvider.
func (r *Runtime) Metadata() agent.Metadata {
	return agent.Metadata{
		Type:        Type,
		Description: fmt.Sprintf("HTTP %s to %s", r.s.Method, r.host),
		Streaming:   true,
		InputModes:  []string{"text/plain", "application/json"},
		OutputModes: []string{"text/plain", "application/json"},
	}
}

// Close releases idle connections.
func (r *Runtime) Close() error {
	r.transport.CloseIdleConnections()
	return nil
}

// Invoke calls the endpoint and returns its answer; a streamed response is
// read to its end.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	return r.run(ctx, req, nil)
}

// Stream calls the endpoint and, when it answers with server-sent events or
// newline-delimited JSON, emits each event's text as a chunk as it arrives.
// The result holds the whole text as the same artifact.
func (r *Runtime) Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	return r.run(ctx, req, emit)
}

func (r *Runtime) run(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	body, err := r.requestBody(req)
	if err != nil {
		return nil, err
	}
	for call := 1; ; call++ {
		res, err := r.call(ctx, body, emit)
		if err == nil {
			return res, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("webhook %s: %w", r.host, ctxErr)
		}
		var re *retryableError
		if !errors.As(err, &re) {
			return nil, err
		}
		if call >= r.s.Retry.MaxAttempts {
			// Retryable by the task too, with the code of the status
			// table (docs/runtimes.md): unavailable.
			if call > 1 {
				return nil, task.Errorf(re.code(), "%w (after %d calls)", re.err, call)
			}
			return nil, task.Errorf(re.code(), "%w", re.err)
		}
		if err := sleep(ctx, r.backoff(call, re.after)); err != nil {
			return nil, fmt.Errorf("webhook %s: %w", r.host, err)
		}
	}
}

// payload is the default request body, the shape n8n's chat trigger and
// AI agent nodes read (chatInput, sessionId) plus pactum's own fields.
type payload struct {
	ChatInput string         `json:"chatInput"`
	SessionID string         `json:"sessionId"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Action    string         `json:"action"`
	Actor     string         `json:"actor"`
	Attempt   int            `json:"attempt"`
	Message   task.Message   `json:"message"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Retry is set on an attempt after feedback: the turn's request, the
	// rejected answer and what to fix (chatInput holds all three as one
	// text).
	Retry *task.Retry `json:"retry,omitempty"`
	// System, Tools and Model are the agent definition's (Settings.Role).
	System string   `json:"system,omitempty"`
	Tools  []string `json:"tools,omitempty"`
	Model  string   `json:"model,omitempty"`
}

func (r *Runtime) requestBody(req *task.Request) ([]byte, error) {
	if r.s.Method == http.MethodGet {
		return nil, nil
	}
	if r.body == nil {
		rt := req.Retry()
		pl := payload{
			ChatInput: req.Message.Text(),
			SessionID: req.ContextID,
			TaskID:    req.TaskID,
			ContextID: req.ContextID,
			Action:    req.Envelope.Action,
			Actor:     req.Envelope.Actor,
			Attempt:   req.Attempt,
			Message:   req.Message,
			Metadata:  req.Envelope.Metadata,
			Retry:     rt,
		}
		if rt != nil {
			pl.ChatInput = rt.Text()
		}
		if ro := r.s.Role; ro != nil {
			pl.System, pl.Tools, pl.Model = ro.System, ro.Tools, ro.Model
		}
		b, err := json.Marshal(pl)
		if err != nil {
			return nil, task.Permanent(fmt.Errorf("webhook: encode request body: %w", err))
		}
		return b, nil
	}
	d := tmpl.NewData(req)
	d.SetRole(r.s.Role, nil)
	s, err := r.body.Execute(d)
	if err != nil {
		return nil, task.Permanent(fmt.Errorf("webhook: body: %w", err))
	}
	if !json.Valid([]byte(s)) {
		return nil, task.Permanent(fmt.Errorf("webhook: body: the template produced invalid JSON: %s", excerpt([]byte(s))))
	}
	return []byte(s), nil
}

// retryableError marks a failed call that may succeed if made again.
type retryableError struct {
	err    error
	after  time.Duration // the server's Retry-After, if any
	status int           // the response's status; httpstatus.NoResponse for none
}

// code is the task error code of the failed call, by the shared status
// policy: unavailable for no response and for every retryable status.
func (e *retryableError) code() task.Code { return httpstatus.Code(e.status) }

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

var errCallTimeout = errors.New("call timed out")

// call makes one HTTP call and reads its response.
func (r *Runtime) call(ctx context.Context, body []byte, emit task.Emit) (*task.Result, error) {
	cctx, cancel := context.WithTimeoutCause(ctx, r.s.Timeout, errCallTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(cctx, r.s.Method, r.s.URL, rd)
	if err != nil {
		return nil, task.Permanent(fmt.Errorf("webhook %s: %w", r.host, err))
	}
	hreq.Header = r.header.Clone()
	resp, err := r.client.Do(hreq)
	if err != nil {
		return nil, r.transportError(cctx, err)
	}
	defer resp.Body.Close()

	switch httpstatus.Classify(resp.StatusCode) {
	case httpstatus.Retry:
		return nil, &retryableError{
			err:    fmt.Errorf("webhook %s: %s%s", r.host, resp.Status, bodyExcerpt(resp.Body)),
			after:  retryAfter(resp.Header.Get("Retry-After")),
			status: resp.StatusCode,
		}
	case httpstatus.Permanent:
		return nil, task.Permanent(task.Errorf(httpstatus.Code(resp.StatusCode), "webhook %s: %s%s", r.host, resp.Status, bodyExcerpt(resp.Body)))
	}
	res, err := r.readResponse(resp, &limitReader{r: resp.Body, n: r.s.MaxResponseBytes}, emit)
	if err != nil {
		// Chunks may already be out, so the call is not made again here;
		// the task's retry policy decides.
		if errors.Is(context.Cause(cctx), errCallTimeout) {
			return nil, fmt.Errorf("webhook %s: response not complete within %s: %w", r.host, r.s.Timeout, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("webhook %s: read response: %w", r.host, err)
	}
	return res, nil
}

// transportError classifies a failed HTTP call. The URL is left out of the
// message: webhook URLs often carry a secret.
func (r *Runtime) transportError(cctx context.Context, err error) error {
	var blocked *netguard.BlockedError
	if errors.As(err, &blocked) {
		return task.Permanent(fmt.Errorf("webhook %s: %w; set allow_private: true in the agent's webhook settings to allow loopback, private and link-local destinations", r.host, blocked))
	}
	if errors.Is(context.Cause(cctx), errCallTimeout) {
		return &retryableError{err: fmt.Errorf("webhook %s: no response within %s: %w", r.host, r.s.Timeout, context.DeadlineExceeded)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &retryableError{err: fmt.Errorf("webhook %s: %w", r.host, err)}
}

// backoff returns the wait before call n+1: exponential from
// InitialBackoff, capped at MaxBackoff, with half of it random so that
// many tasks failing together do not retry together. A longer Retry-After
// from the server wins, up to MaxBackoff.
func (r *Runtime) backoff(n int, after time.Duration) time.Duration {
	d := backoff.Exponential{Initial: r.s.Retry.InitialBackoff, Max: r.s.Retry.MaxBackoff, Jitter: 0.5}.Delay(n)
	return max(d, min(after, r.s.Retry.MaxBackoff))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfter parses a Retry-After header (seconds or an HTTP date).
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// bodyExcerpt returns ": " and the start of an error response, or "".
func bodyExcerpt(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, excerptBytes+1))
	s := excerpt(b)
	if s == "" {
		return ""
	}
	return ": " + s
}

func excerpt(b []byte) string {
	cut := len(b) > excerptBytes
	if cut {
		b = b[:excerptBytes]
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if cut {
		s += "…"
	}
	return s
}

// limitReader fails once more than n bytes were read.
type limitReader struct {
	r io.Reader
	n int
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, l.tooLarge()
	}
	if len(p) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= n
	if l.n < 0 {
		return n + l.n, l.tooLarge()
	}
	return n, err
}

func (l *limitReader) tooLarge() error {
	return task.Permanent(errors.New("response exceeds max_response_bytes"))
}
