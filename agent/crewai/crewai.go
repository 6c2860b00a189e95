// Package crewai calls a crew deployed on CrewAI AMP (type "crewai")
// through the REST API every deployed crew serves: GET /inputs,
// POST /kickoff, GET /status/{kickoff_id} and POST /resume, as CrewAI's
// OpenAPI document describes them (docs/edge/enterprise-api.en.yaml in
// github.com/crewAIInc/crewAI).
//
// An attempt kicks the crew off with inputs taken from the request's
// message (its first JSON object data part, else its text under one
// input name), then polls the execution's status with backoff until it
// completes, fails, or pauses for human feedback, or until the attempt's
// context ends. A paused crew puts the task in input_required with the
// output to review; the caller's answer is sent to POST /resume and the
// polling goes on. The kickoff id of a paused crew is kept in the
// metadata of the question's message, which is stored with the task, so
// the answer resumes the same execution after pactum restarts.
//
// The API has no call to stop an execution: when an attempt ends early
// (canceled, timed out) pactum stops polling and the crew runs on.
package crewai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/endpoint"
	"github.com/pactum/pactum/agent/internal/traced"
	"github.com/pactum/pactum/internal/backoff"
	"github.com/pactum/pactum/internal/httpstatus"
	"github.com/pactum/pactum/task"
)

// Type is the runtime type name used in configuration.
const Type = "crewai"

// Defaults of Settings.
const (
	DefaultInputsKey        = "topic"
	DefaultOutput           = "text"
	DefaultPollInterval     = time.Second
	DefaultMaxPollInterval  = 15 * time.Second
	DefaultMaxPollFailures  = 5
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 4 << 20
)

// MetaKey names the metadata entry of the message that asks for human
// feedback: {"kickoffId": …, "taskId": …}, the paused execution and its
// task. The answer's attempt reads it back from the task's history.
const MetaKey = "pactum.crewai"

// artifactName names the artifact an attempt produces.
const artifactName = "output"

func init() {
	agent.Register(Type, func(_ context.Context, spec agent.Spec) (agent.Agent, error) {
		var s Settings
		if err := spec.DecodeInto(&s); err != nil {
			return nil, err
		}
		return New(s)
	})
}

// Settings configures a crewai runtime: the mapping under `crewai:` in an
// agent's configuration.
type Settings struct {
	// URL is the crew's URL from the CrewAI AMP dashboard, e.g.
	// https://my-crew.crewai.com; the API's paths are appended to it.
	// Required.
	URL string `yaml:"url"`
	// TokenEnv names the environment variable holding the crew's bearer
	// token, sent as Authorization: Bearer on every call. It is read when
	// the runtime is built (unset is an error) and never appears in
	// errors or logs. Default: "", no token is sent (AMP requires one).
	TokenEnv string `yaml:"token_env"`
	// OAuth2 gets every request's bearer token from an OAuth 2.0 client
	// credentials grant: token_url, client_id, client_secret_env,
	// scopes, audience, resource (docs/runtimes.md, "Client
	// credentials"). Not with token_env. Default none.
	OAuth2 *clientcreds.Settings `yaml:"oauth2"`
	// InputsKey is the input that a message without a JSON object data
	// part fills with its text. Default: "topic".
	InputsKey string `yaml:"inputs_key"`
	// CheckInputs asks GET /inputs for the crew's required inputs before
	// each kickoff and fails the task permanently, naming them, when the
	// message leaves some out. Default: false (the crew's own 422 names
	// them too).
	CheckInputs bool `yaml:"check_inputs"`
	// Output is how the crew's final output becomes the answer: "text",
	// the output as text; "json", the output parsed as JSON (an object or
	// array is a data part; output that is not JSON fails the task
	// permanently). Default: "text".
	Output string `yaml:"output"`
	// PollInterval is the wait before the first status call, doubled
	// after each later one up to MaxPollInterval. Default: 1s.
	PollInterval time.Duration `yaml:"poll_interval"`
	// MaxPollInterval caps the wait between status calls. Default: 15s,
	// or PollInterval when that is longer.
	MaxPollInterval time.Duration `yaml:"max_poll_interval"`
	// MaxPollFailures is the number of status calls in a row that may fail
	// retryably (no response, a retryable status) before the attempt
	// fails; the task's retry policy then kicks the crew off again.
	// Default: 5.
	MaxPollFailures int `yaml:"max_poll_failures"`
	// Timeout bounds each HTTP call. A whole attempt, polling included,
	// is bounded by the agent's own timeout. Default: 30s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxResponseBytes bounds a response body; a larger one fails the
	// attempt permanently. Default: 4194304 (4 MiB).
	MaxResponseBytes int `yaml:"max_response_bytes"`
}

func (s Settings) withDefaults() Settings {
	if s.InputsKey == "" {
		s.InputsKey = DefaultInputsKey
	}
	if s.Output == "" {
		s.Output = DefaultOutput
	}
	if s.PollInterval == 0 {
		s.PollInterval = DefaultPollInterval
	}
	if s.MaxPollInterval == 0 {
		s.MaxPollInterval = max(DefaultMaxPollInterval, s.PollInterval)
	}
	if s.MaxPollFailures == 0 {
		s.MaxPollFailures = DefaultMaxPollFailures
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxResponseBytes == 0 {
		s.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return s
}

func (s Settings) validate() error {
	if s.URL == "" {
		return errors.New("url: required, the crew's URL, e.g. https://my-crew.crewai.com")
	}
	u, err := endpoint.CheckSetting(s.URL, "url", "name the token's environment variable in token_env")
	if err != nil {
		return err
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("url: must not have a query or fragment; the API's paths are appended to it")
	}
	if s.OAuth2 != nil && s.TokenEnv != "" {
		return errors.New("oauth2: not with token_env: both give the bearer token")
	}
	if err := clientcreds.CheckWith(s.OAuth2, nil); err != nil {
		return err
	}
	if s.Output != "text" && s.Output != "json" {
		return fmt.Errorf("output: must be text or json (got %q)", s.Output)
	}
	if s.PollInterval < 0 {
		return fmt.Errorf("poll_interval: must not be negative (got %s)", s.PollInterval)
	}
	if s.MaxPollInterval < s.PollInterval {
		return fmt.Errorf("max_poll_interval: must not be less than poll_interval (%s < %s)", s.MaxPollInterval, s.PollInterval)
	}
	if s.MaxPollFailures < 0 {
		return fmt.Errorf("max_poll_failures: must not be negative (got %d)", s.MaxPollFailures)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("timeout: must not be negative (got %s)", s.Timeout)
	}
	if s.MaxResponseBytes < 0 {
		return fmt.Errorf("max_response_bytes: must not be negative (got %d)", s.MaxResponseBytes)
	}
	return nil
}

// Runtime runs one crew per attempt.
type Runtime struct {
	s         Settings
	base      string // URL without a trailing slash
	host      string // for errors and metadata
	token     string
	transport *http.Transport
	client    *http.Client
}

var (
	_ agent.Agent            = (*Runtime)(nil)
	_ agent.MetadataProvider = (*Runtime)(nil)
	_ io.Closer              = (*Runtime)(nil)
)

// New returns a runtime for s, or an error naming the setting that is
// wrong. It reads the token from the environment now.
func New(s Settings) (*Runtime, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	r := &Runtime{s: s, base: strings.TrimRight(s.URL, "/")}
	u, _ := url.Parse(s.URL) // validated
	r.host = u.Host
	if s.TokenEnv != "" {
		v, ok := os.LookupEnv(s.TokenEnv)
		if !ok || v == "" {
			return nil, fmt.Errorf("token_env: environment variable %s is not set", s.TokenEnv)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("token_env: the value of %s holds a line break or NUL", s.TokenEnv)
		}
		r.token = v
	}
	r.transport = http.DefaultTransport.(*http.Transport).Clone()
	authed, err := clientcreds.Wrap(s.OAuth2, traced.Transport(r.transport))
	if err != nil {
		return nil, err
	}
	r.client = &http.Client{Transport: authed}
	return r, nil
}

// Metadata implements agent.MetadataProvider.
func (r *Runtime) Metadata() agent.Metadata {
	out := []string{"text/plain"}
	if r.s.Output == "json" {
		out = []string{"application/json", "text/plain"}
	}
	return agent.Metadata{
		Type:        Type,
		Description: "CrewAI AMP crew at " + r.host,
		InputModes:  []string{"text/plain", "application/json"},
		OutputModes: out,
	}
}

// Close releases idle connections.
func (r *Runtime) Close() error {
	r.transport.CloseIdleConnections()
	return nil
}

// paused is a crew execution waiting for human feedback, as the question's
// message metadata records it.
type paused struct {
	KickoffID string
	TaskID    string
}

// Invoke runs the crew: it resumes the execution the task's last question
// came from, or kicks the crew off, and polls it until it ends or asks.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	if p, ok := pausedFrom(req); ok {
		if err := r.resume(ctx, p, req.Message); err != nil {
			return nil, err
		}
		return r.poll(ctx, p.KickoffID, true)
	}
	inputs, err := r.inputs(req)
	if err != nil {
		return nil, err
	}
	if r.s.CheckInputs {
		if err := r.checkInputs(ctx, inputs); err != nil {
			return nil, err
		}
	}
	id, err := r.kickoff(ctx, req, inputs)
	if err != nil {
		return nil, err
	}
	return r.poll(ctx, id, false)
}

// pausedFrom returns the paused execution that the task's latest agent
// message asked about; only the latest counts, since a later agent
// message means that question was answered.
func pausedFrom(req *task.Request) (paused, bool) {
	for i := len(req.History) - 1; i >= 0; i-- {
		m := req.History[i]
		if m.Role != task.RoleAgent {
			continue
		}
		raw, ok := m.Metadata[MetaKey].(map[string]any)
		if !ok {
			return paused{}, false
		}
		k, _ := raw["kickoffId"].(string)
		t, _ := raw["taskId"].(string)
		if k == "" || t == "" {
			return paused{}, false
		}
		return paused{KickoffID: k, TaskID: t}, true
	}
	return paused{}, false
}

// inputs returns the kickoff's inputs: the first data part of the
// message that holds a JSON object, else the message's text under
// InputsKey. The document types input values as strings: a string is
// sent as it is, any other value as its JSON text.
func (r *Runtime) inputs(req *task.Request) (map[string]string, error) {
	rt := req.Retry()
	for _, p := range req.Original().Parts {
		if p.Kind != task.PartData {
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(p.Data, &obj) != nil || obj == nil {
			continue
		}
		in := make(map[string]string, len(obj))
		for k, v := range obj {
			in[k] = text(v)
		}
		if rt != nil {
			// What to fix goes to the crew with the inputs it knows: the
			// retry's text after the request (the rejected answer and
			// what to fix).
			notes := strings.TrimSpace(strings.TrimPrefix(rt.Text(), rt.Request.Text()))
			in[r.s.InputsKey] = strings.TrimSpace(in[r.s.InputsKey] + "\n\n" + notes)
		}
		return in, nil
	}
	t := req.Text()
	if strings.TrimSpace(t) == "" {
		return nil, task.Permanent(task.Errorf(task.CodeInvalidArgument,
			"crewai: the message has neither a JSON object data part (the crew's inputs) nor text (the %q input)", r.s.InputsKey))
	}
	return map[string]string{r.s.InputsKey: t}, nil
}

// checkInputs refuses, permanently, inputs that leave out one the crew
// requires.
func (r *Runtime) checkInputs(ctx context.Context, inputs map[string]string) error {
	b, err := r.call(ctx, http.MethodGet, "/inputs", nil)
	if err != nil {
		return err
	}
	required, err := DecodeInputs(b)
	if err != nil {
		return r.badResponse(err)
	}
	var missing []string
	for _, k := range required {
		if _, ok := inputs[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return task.Permanent(task.Errorf(task.CodeInvalidArgument,
			"crewai %s: the message lacks the crew's required inputs %s (send them as a JSON object data part)", r.host, strings.Join(missing, ", ")))
	}
	return nil
}

// kickoffBody is the document's POST /kickoff request body; meta reaches
// the crew's webhooks and traces.
type kickoffBody struct {
	Inputs map[string]string `json:"inputs"`
	Meta   map[string]string `json:"meta,omitempty"`
}

func (r *Runtime) kickoff(ctx context.Context, req *task.Request, inputs map[string]string) (string, error) {
	body, err := json.Marshal(kickoffBody{Inputs: inputs, Meta: map[string]string{"pactumTaskId": req.TaskID, "pactumContextId": req.ContextID}})
	if err != nil {
		return "", task.Permanent(fmt.Errorf("crewai: encode kickoff: %w", err))
	}
	b, err := r.call(ctx, http.MethodPost, "/kickoff", body)
	if err != nil {
		return "", err
	}
	id, err := DecodeKickoff(b)
	if err != nil {
		return "", r.badResponse(err)
	}
	return id, nil
}

// resumeBody is the document's POST /resume request body.
type resumeBody struct {
	ExecutionID   string `json:"execution_id"`
	TaskID        string `json:"task_id"`
	HumanFeedback string `json:"human_feedback"`
	IsApprove     bool   `json:"is_approve"`
}

// resume sends the caller's answer as the paused task's feedback. The
// answer approves the task's output (is_approve: true) unless its first
// JSON object data part says {"is_approve": false}; the feedback is its
// text, or that object's "human_feedback".
func (r *Runtime) resume(ctx context.Context, p paused, answer task.Message) error {
	rb := resumeBody{ExecutionID: p.KickoffID, TaskID: p.TaskID, HumanFeedback: answer.Text(), IsApprove: true}
	for _, part := range answer.Parts {
		if part.Kind != task.PartData {
			continue
		}
		var o struct {
			HumanFeedback *string `json:"human_feedback"`
			IsApprove     *bool   `json:"is_approve"`
		}
		if json.Unmarshal(part.Data, &o) != nil {
			continue
		}
		if o.HumanFeedback != nil {
			rb.HumanFeedback = *o.HumanFeedback
		}
		if o.IsApprove != nil {
			rb.IsApprove = *o.IsApprove
		}
		break
	}
	body, err := json.Marshal(rb)
	if err != nil {
		return task.Permanent(fmt.Errorf("crewai: encode resume: %w", err))
	}
	b, err := r.call(ctx, http.MethodPost, "/resume", body)
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusBadRequest {
		// "Execution is not in pending human input state": an earlier
		// attempt resumed it already and failed afterwards. Polling
		// tells; it asks again if the crew does wait.
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := DecodeResume(b); err != nil {
		return r.badResponse(err)
	}
	return nil
}

// poll reads the execution's status until it ends, pauses, or ctx ends.
// resumed says the attempt resumed a paused execution: its failure is
// then permanent, since a retry would resume (and find failed) the same
// execution again, and a new kickoff would lose the feedback given.
func (r *Runtime) poll(ctx context.Context, id string, resumed bool) (*task.Result, error) {
	wait := backoff.Exponential{Initial: r.s.PollInterval, Max: r.s.MaxPollInterval, Jitter: 0.2}
	failures := 0
	for n := 1; ; n++ {
		if err := sleep(ctx, wait.Delay(n)); err != nil {
			return nil, r.stopped(id, err)
		}
		b, err := r.call(ctx, http.MethodGet, "/status/"+url.PathEscape(id), nil)
		if err != nil {
			if ctx.Err() != nil {
				return nil, r.stopped(id, ctx.Err())
			}
			var he *httpError
			if task.IsPermanent(err) || !errors.As(err, &he) {
				return nil, err
			}
			failures++
			if failures > r.s.MaxPollFailures {
				return nil, task.Errorf(he.code(), "%w (after %d failed status calls)", err, failures)
			}
			continue
		}
		failures = 0
		st, err := DecodeStatus(b)
		if err != nil {
			return nil, r.badResponse(err)
		}
		switch st.State {
		case Completed:
			return r.result(id, st)
		case Failed:
			err := task.Errorf(task.CodeAgentFailed, "crewai %s: kickoff %s failed: %s", r.host, id, clip(st.Error))
			if resumed {
				return nil, task.Permanent(err)
			}
			// The document gives no reason to think the same inputs
			// fail again; the task's retry policy decides.
			return nil, err
		case AwaitingFeedback:
			return r.question(id, st), nil
		}
	}
}

// stopped is the error of an attempt whose context ended while the crew
// ran: the API cannot stop it, so it runs on.
func (r *Runtime) stopped(id string, err error) error {
	return fmt.Errorf("crewai %s: stopped polling kickoff %s (the crew runs on): %w", r.host, id, err)
}

// question pauses the task: the task's output to review is the question,
// and the message's metadata records the execution to resume.
func (r *Runtime) question(id string, st *Status) *task.Result {
	q := st.TaskOutput
	if q == "" {
		q = fmt.Sprintf("The crew waits for feedback on task %s.", st.Task)
	}
	m := answer.Message(q)
	m.Metadata = map[string]any{MetaKey: map[string]any{"kickoffId": id, "taskId": st.Task}}
	return &task.Result{InputRequired: true, Message: m, Reason: "the crew waits for human feedback on task " + clip(st.Task)}
}

// result turns a completed execution into the answer.
func (r *Runtime) result(id string, st *Status) (*task.Result, error) {
	var res *task.Result
	if r.s.Output == "json" {
		v, err := answer.Decode([]byte(st.Output))
		if err != nil {
			return nil, task.Permanent(task.Errorf(task.CodeAgentFailed, "crewai %s: kickoff %s: output: json, but the crew's output is not JSON: %v", r.host, id, err))
		}
		res, err = answer.Value(answer.NewID(), artifactName, v)
		if err != nil {
			return nil, task.Permanent(err)
		}
	} else {
		out := st.Output
		if out == "" && len(st.Result) > 0 {
			out = text(st.Result)
		}
		res = answer.Text(answer.NewID(), artifactName, out)
	}
	res.Artifacts[0].Metadata = map[string]any{"pactum": map[string]any{"crewai": map[string]any{"kickoffId": id}}}
	return res, nil
}

// httpError is a failed call's status.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// code is the task error code of the status by the shared policy.
func (e *httpError) code() task.Code { return httpstatus.Code(e.status) }

var errCallTimeout = errors.New("call timed out")

// call makes one call and returns the body of its 2xx response. A
// transport error or retryable status is an *httpError; a permanent status
// is also marked task.Permanent.
func (r *Runtime) call(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	cctx, cancel := context.WithTimeoutCause(ctx, r.s.Timeout, errCallTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(cctx, method, r.base+path, rd)
	if err != nil {
		return nil, task.Permanent(fmt.Errorf("crewai %s: %w", r.host, err))
	}
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "pactum")
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+r.token)
	}
	op := method + " " + opPath(path)
	resp, err := r.client.Do(hreq)
	if err != nil {
		if errors.Is(context.Cause(cctx), errCallTimeout) {
			err = fmt.Errorf("no response within %s: %w", r.s.Timeout, context.DeadlineExceeded)
		} else {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
		}
		he := &httpError{status: httpstatus.NoResponse, err: fmt.Errorf("crewai %s: %s: %w", r.host, op, err)}
		return nil, task.Errorf(task.CodeUnavailable, "%w", he)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(r.s.MaxResponseBytes)+1))
	if err != nil {
		he := &httpError{status: httpstatus.NoResponse, err: fmt.Errorf("crewai %s: %s: read response: %w", r.host, op, err)}
		return nil, task.Errorf(task.CodeUnavailable, "%w", he)
	}
	if len(b) > r.s.MaxResponseBytes {
		return nil, task.Permanent(task.Errorf(task.CodeAgentFailed, "crewai %s: %s: response exceeds max_response_bytes (%d)", r.host, op, r.s.MaxResponseBytes))
	}
	v := httpstatus.Classify(resp.StatusCode)
	if v == httpstatus.OK {
		return b, nil
	}
	msg := resp.Status
	if e, ok := DecodeError(b); ok {
		msg += ": " + e.String()
	}
	he := &httpError{status: resp.StatusCode, err: fmt.Errorf("crewai %s: %s: %s", r.host, op, msg)}
	if v == httpstatus.Permanent {
		return nil, task.Permanent(task.Errorf(he.code(), "%w", he))
	}
	return nil, task.Errorf(he.code(), "%w", he)
}

// opPath names a call's path for errors without the kickoff id.
func opPath(path string) string {
	if strings.HasPrefix(path, "/status/") {
		return "/status/{kickoff_id}"
	}
	return path
}

// badResponse marks a 2xx response the runtime cannot read: the crew (or
// whatever answers at the URL) does not speak the API as documented, which
// a retry does not change.
func (r *Runtime) badResponse(err error) error {
	return task.Permanent(task.Errorf(task.CodeAgentFailed, "crewai %s: %v", r.host, err))
}

func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
