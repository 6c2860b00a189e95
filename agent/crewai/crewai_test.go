// These tests run the crewai runtime against crewaitest.Server, which
// stands in for a crew deployed on CrewAI AMP: AMP is a hosted service and
// CrewAI cannot run here (no PyPI), so the server was written for the tests
// from CrewAI's published OpenAPI document of the AMP REST API
// (docs/edge/enterprise-api.en.yaml in github.com/crewAIInc/crewAI) and its
// human-in-the-loop guide; see the package doc of crewaitest.
package crewai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/crewai"
	"github.com/pactum/pactum/agent/crewai/crewaitest"
	"github.com/pactum/pactum/agent/internal/clientcreds/cctest"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/task"
)

// token is the crew's bearer token, in the environment under tokenEnv for
// every test (set once: t.Setenv cannot be used by parallel tests).
const (
	token    = "amp-test-token"
	tokenEnv = "PACTUM_CREWAI_TEST_TOKEN"
)

func TestMain(m *testing.M) {
	os.Setenv(tokenEnv, token)
	os.Exit(m.Run())
}

var (
	running = crewaitest.Step{Status: crewaitest.StatusRunning, Task: "research_task"}
	done    = crewaitest.Step{Status: crewaitest.StatusCompleted, Task: "writing_task", Output: "A report on AI agents."}
)

// build returns a runtime for the crew at srv with extra settings.
func build(t *testing.T, srv *crewaitest.Server, extra string) *crewai.Runtime {
	t.Helper()
	y := fmt.Sprintf("url: %s\ntoken_env: %s\npoll_interval: 1ms\nmax_poll_interval: 4ms\n%s", srv.URL, tokenEnv, extra)
	a, err := agent.New(t.Context(), agenttest.Spec(t, crewai.Type, y))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Close(a) })
	return a.(*crewai.Runtime)
}

func TestCompletes(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, crewaitest.Steps(running, running, done))
	r := build(t, srv, "")
	res, err := r.Invoke(t.Context(), agenttest.Request("AI agents"))
	if err != nil {
		t.Fatal(err)
	}
	if got := agenttest.ResultText(t, res); got != "A report on AI agents." {
		t.Errorf("answer = %q", got)
	}
	if res.Message == nil || res.Message.Text() != "A report on AI agents." || res.InputRequired {
		t.Errorf("message = %+v, input required %v", res.Message, res.InputRequired)
	}
	ks := srv.Kickoffs()
	if len(ks) != 1 {
		t.Fatalf("%d kickoffs", len(ks))
	}
	if got := fmt.Sprint(ks[0].Inputs); got != "map[topic:AI agents]" {
		t.Errorf("inputs = %s", got)
	}
	if ks[0].Meta["pactumTaskId"] != "task-1" {
		t.Errorf("meta = %v", ks[0].Meta)
	}
	meta, _ := json.Marshal(res.Artifacts[0].Metadata)
	if want := fmt.Sprintf(`{"pactum":{"crewai":{"kickoffId":%q}}}`, ks[0].ID); string(meta) != want {
		t.Errorf("artifact metadata = %s, want %s", meta, want)
	}
	if n := srv.Calls("status"); n != 3 {
		t.Errorf("%d status calls, want 3", n)
	}
}

// TestClientCredentials: with oauth2 instead of token_env every call to
// the crew carries the bearer token of a client credentials grant (a
// stand-in token endpoint, cctest), fetched once; both at once are refused.
func TestClientCredentials(t *testing.T) {
	// Not parallel: cctest sets the secret's environment variable.
	idp := cctest.Start(t)
	srv := crewaitest.New(t, "tok-1", crewaitest.Steps(running, done))
	a, err := agent.New(t.Context(), agenttest.Spec(t, crewai.Type, fmt.Sprintf("url: %s\npoll_interval: 1ms\nmax_poll_interval: 4ms\n%s", srv.URL, idp.YAML())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Close(a) })
	res, err := a.Invoke(t.Context(), agenttest.Request("AI agents"))
	if err != nil {
		t.Fatalf("Invoke (the stand-in crew accepts only Bearer tok-1): %v", err)
	}
	if got := agenttest.ResultText(t, res); got != "A report on AI agents." || idp.Issued() != 1 {
		t.Errorf("answer %q with %d tokens issued", got, idp.Issued())
	}
	if _, err := agent.New(t.Context(), agenttest.Spec(t, crewai.Type, fmt.Sprintf("url: %s\ntoken_env: %s\n%s", srv.URL, tokenEnv, idp.YAML()))); err == nil ||
		!strings.Contains(err.Error(), "oauth2: not with token_env") {
		t.Errorf("oauth2 with token_env: %v", err)
	}
}

func TestInputsKeyAndDataPart(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, crewaitest.Steps(done))
	r := build(t, srv, "inputs_key: question\n")
	if _, err := r.Invoke(t.Context(), agenttest.Request("why?")); err != nil {
		t.Fatal(err)
	}
	req := agenttest.Request("ignored: a data part wins")
	req.Message.Parts = append(req.Message.Parts, task.DataPart(json.RawMessage(`[1]`)),
		task.DataPart(json.RawMessage(`{"budget":"1000 USD","age":35,"interests":["games","ai"],"x":null}`)))
	if _, err := r.Invoke(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	ks := srv.Kickoffs()
	if got := fmt.Sprint(ks[0].Inputs); got != "map[question:why?]" {
		t.Errorf("text inputs = %s", got)
	}
	if got := fmt.Sprint(ks[1].Inputs); got != `map[age:35 budget:1000 USD interests:["games","ai"] x:]` {
		t.Errorf("data inputs = %s", got)
	}

	empty := agenttest.Request("  ")
	_, err := r.Invoke(t.Context(), empty)
	if !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeInvalidArgument {
		t.Errorf("empty message: %v (permanent %v)", err, task.IsPermanent(err))
	}
}

func TestRequiredInputs(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, crewaitest.Steps(done))
	srv.Inputs = []string{"budget", "topic", "age"}

	// The crew's own 422 names what is missing.
	r := build(t, srv, "")
	_, err := r.Invoke(t.Context(), agenttest.Request("AI"))
	if !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeInvalidArgument || !strings.Contains(err.Error(), "missing inputs: budget, age") {
		t.Errorf("kickoff without inputs: %v", err)
	}

	// check_inputs refuses before the kickoff.
	r = build(t, srv, "check_inputs: true\n")
	_, err = r.Invoke(t.Context(), agenttest.Request("AI"))
	if !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeInvalidArgument || !strings.Contains(err.Error(), "required inputs age, budget") {
		t.Errorf("check_inputs: %v", err)
	}
	if n := srv.Calls("kickoff"); n != 1 {
		t.Errorf("%d kickoffs, want 1 (check_inputs must refuse before kicking off)", n)
	}
	req := agenttest.Request("")
	req.Message.Parts = []task.Part{task.DataPart(json.RawMessage(`{"budget":"1","topic":"AI","age":"3"}`))}
	if _, err := r.Invoke(t.Context(), req); err != nil {
		t.Errorf("all inputs given: %v", err)
	}
}

// TestHumanFeedback goes through the task lifecycle: the paused crew
// puts the task in input_required with the task's output to review, and
// the answer resumes the same kickoff (approving it, or not when a data
// part says so) until the crew completes.
func TestHumanFeedback(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, crewaitest.Steps(
		running,
		crewaitest.Step{Status: crewaitest.StatusPending, Task: "research_task", Output: "Draft: agents plan and act."},
		crewaitest.Step{Status: crewaitest.StatusPending, Task: "research_task", Output: "Draft 2: with sources."},
		done,
	))
	r := build(t, srv, "")
	coord := agenttest.Coordinator(t, "n1", task.AgentSpec{Name: "crew", Runner: agent.Runner(r)})
	ctx := t.Context()

	tk := agenttest.Run(t, ctx, coord, "crew", task.TextPart("AI agents"))
	if tk.State != task.StateInputRequired {
		t.Fatalf("state %s (%s)", tk.State, tk.Reason)
	}
	if q := tk.StatusMessage.Text(); q != "Draft: agents plan and act." {
		t.Errorf("question = %q", q)
	}
	ks := srv.Kickoffs()
	meta, _ := json.Marshal(tk.StatusMessage.Metadata)
	if want := fmt.Sprintf(`{"pactum.crewai":{"kickoffId":%q,"taskId":"research_task"}}`, ks[0].ID); string(meta) != want {
		t.Errorf("question metadata = %s, want %s", meta, want)
	}

	// Not approved: the data part says so.
	if _, err := coord.Continue(ctx, tk.ID, task.Message{ID: task.NewID(), Parts: []task.Part{
		task.DataPart(json.RawMessage(`{"human_feedback":"Cite sources.","is_approve":false}`)),
	}}); err != nil {
		t.Fatal(err)
	}
	tk, err := coord.Wait(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.State != task.StateInputRequired || tk.StatusMessage.Text() != "Draft 2: with sources." {
		t.Fatalf("after the first answer: %s %q", tk.State, tk.StatusMessage.Text())
	}
	tk = agenttest.Answer(t, ctx, coord, tk.ID, "Looks good.")
	if tk.State != task.StateSucceeded {
		t.Fatalf("state %s (%s)", tk.State, tk.Reason)
	}
	if got := agenttest.PartsText(tk.Artifacts[0].Parts); got != "A report on AI agents." {
		t.Errorf("answer = %q", got)
	}
	want := []crewaitest.Resume{
		{ExecutionID: ks[0].ID, TaskID: "research_task", HumanFeedback: "Cite sources.", IsApprove: false},
		{ExecutionID: ks[0].ID, TaskID: "research_task", HumanFeedback: "Looks good.", IsApprove: true},
	}
	if got := srv.Resumes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("resumes:\n got %+v\nwant %+v", got, want)
	}
	if n := len(srv.Kickoffs()); n != 1 {
		t.Errorf("%d kickoffs, want 1", n)
	}
}

// TestResumeAlreadyResumed: an attempt that resumed the crew and failed
// afterwards is retried; the crew says it no longer waits (400), and the
// retry polls the same kickoff to its end instead of failing.
func TestResumeAlreadyResumed(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, crewaitest.Steps(
		crewaitest.Step{Status: crewaitest.StatusPending, Task: "research_task", Output: "Draft"},
		done,
	))
	r := build(t, srv, "max_poll_failures: 1\n")
	first := agenttest.Request("AI")
	res, err := r.Invoke(t.Context(), first)
	if err != nil || !res.InputRequired {
		t.Fatalf("first attempt: %+v, %v", res, err)
	}
	ans := task.Message{ID: "a1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("ok")}}
	second := agenttest.Request("AI")
	second.History = append(second.History, *res.Message, ans)
	second.Message = ans
	srv.Fail("status", 503, 503)
	if _, err := r.Invoke(t.Context(), second); task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnavailable {
		t.Fatalf("attempt with failing status calls: %v", err)
	}
	second.Attempt = 2
	res, err = r.Invoke(t.Context(), second)
	if err != nil {
		t.Fatal(err)
	}
	if got := agenttest.ResultText(t, res); got != "A report on AI agents." {
		t.Errorf("answer = %q", got)
	}
	if n, k := len(srv.Resumes()), srv.Calls("kickoff"); n != 1 || k != 1 {
		t.Errorf("%d resumes accepted and %d kickoffs, want 1 and 1", n, k)
	}
}

func TestCrewError(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, crewaitest.Steps(running,
		crewaitest.Step{Status: crewaitest.StatusError, Output: "Task execution failed: Invalid API key for external service"}))
	r := build(t, srv, "")
	_, err := r.Invoke(t.Context(), agenttest.Request("AI"))
	if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeAgentFailed ||
		!strings.Contains(err.Error(), "failed: Task execution failed: Invalid API key") {
		t.Errorf("err = %v (permanent %v)", err, task.IsPermanent(err))
	}
}

func TestHTTPStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		route     string
		statuses  []int
		extra     string
		wantErr   bool
		permanent bool
		code      task.Code
	}{
		{name: "5xx while polling, then success", route: "status", statuses: []int{503, 500, 429}},
		{name: "5xx while polling past max_poll_failures", route: "status", statuses: []int{503, 502, 500}, extra: "max_poll_failures: 2\n", wantErr: true, code: task.CodeUnavailable},
		{name: "5xx at kickoff", route: "kickoff", statuses: []int{503}, wantErr: true, code: task.CodeUnavailable},
		{name: "400 at kickoff", route: "kickoff", statuses: []int{400}, wantErr: true, permanent: true, code: task.CodeInvalidArgument},
		{name: "404 while polling", route: "status", statuses: []int{404}, wantErr: true, permanent: true, code: task.CodeUnsupported},
		{name: "501 while polling", route: "status", statuses: []int{501}, wantErr: true, permanent: true, code: task.CodeUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := crewaitest.New(t, token, crewaitest.Steps(running, done))
			srv.Fail(tt.route, tt.statuses...)
			r := build(t, srv, tt.extra)
			res, err := r.Invoke(t.Context(), agenttest.Request("AI"))
			if !tt.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				if got := agenttest.ResultText(t, res); got != "A report on AI agents." {
					t.Errorf("answer = %q", got)
				}
				return
			}
			if err == nil || task.IsPermanent(err) != tt.permanent || task.ErrorCode(err) != tt.code {
				t.Errorf("err = %v (permanent %v, code %s), want permanent %v, code %s", err, task.IsPermanent(err), task.ErrorCode(err), tt.permanent, tt.code)
			}
			if err != nil && !strings.Contains(err.Error(), "scripted failure") {
				t.Errorf("err %q does not carry the crew's error message", err)
			}
		})
	}
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, "another-token", crewaitest.Steps(done))
	r := build(t, srv, "")
	_, err := r.Invoke(t.Context(), agenttest.Request("AI"))
	if !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeForbidden || !strings.Contains(err.Error(), "401 Unauthorized: Unauthorized: Invalid or missing bearer token") {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("the error shows the token: %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, crewaitest.Steps(done))
	r := build(t, srv, "")
	srv.Close()
	_, err := r.Invoke(t.Context(), agenttest.Request("AI"))
	if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnavailable {
		t.Errorf("err = %v", err)
	}
}

// TestTimeout: the task's timeout ends the attempt while the crew runs;
// the API cannot stop it, and the error says so.
func TestTimeout(t *testing.T) {
	t.Parallel()
	steps := make([]crewaitest.Step, 10000)
	for i := range steps {
		steps[i] = running
	}
	srv := crewaitest.New(t, token, crewaitest.Steps(steps...))
	r := build(t, srv, "")
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := r.Invoke(ctx, agenttest.Request("AI"))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the crew runs on") {
		t.Errorf("err = %v", err)
	}
}

func TestOutputJSON(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, func(in map[string]string) []crewaitest.Step {
		return []crewaitest.Step{{Status: crewaitest.StatusCompleted, Output: in["topic"]}}
	})
	r := build(t, srv, "output: json\n")
	res, err := r.Invoke(t.Context(), agenttest.Request(` {"title": "Agents", "score": 9} `))
	if err != nil {
		t.Fatal(err)
	}
	p := res.Artifacts[0].Parts
	if len(p) != 1 || p[0].Kind != task.PartData || string(p[0].Data) != `{"score":9,"title":"Agents"}` {
		t.Errorf("parts = %+v", p)
	}
	_, err = r.Invoke(t.Context(), agenttest.Request("not JSON"))
	if !task.IsPermanent(err) || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("text output with output: json: %v", err)
	}
	if md := r.Metadata(); md.Type != "crewai" || md.OutputModes[0] != "application/json" {
		t.Errorf("metadata = %+v", md)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		settings, err string
	}{
		{"token_env: X", "url: required"},
		{"url: ftp://crew.example.com", `url: scheme must be http or https, not "ftp"`},
		{"url: https://user:pw@crew.example.com", "url: credentials in the URL are not supported; name the token's environment variable in token_env"},
		{"url: https://crew.example.com/?k=v", "url: must not have a query"},
		{"url: https://crew.example.com\noutput: xml", `output: must be text or json (got "xml")`},
		{"url: https://crew.example.com\npoll_interval: 2s\nmax_poll_interval: 1s", "max_poll_interval: must not be less than poll_interval (1s < 2s)"},
		{"url: https://crew.example.com\npoll_interval: -1s", "poll_interval: must not be negative"},
		{"url: https://crew.example.com\nmax_poll_failures: -1", "max_poll_failures: must not be negative"},
		{"url: https://crew.example.com\ntimeout: -1s", "timeout: must not be negative"},
		{"url: https://crew.example.com\nmax_response_bytes: -1", "max_response_bytes: must not be negative"},
		{"url: https://crew.example.com\ntoken_env: PACTUM_CREWAI_TEST_UNSET", "token_env: environment variable PACTUM_CREWAI_TEST_UNSET is not set"},
		{"url: https://crew.example.com\npol_interval: 1s", "field pol_interval not found"},
		{"url: https://crew.example.com\ntoken_env: " + tokenEnv, ""},
	}
	for _, tt := range tests {
		a, err := agent.New(t.Context(), agenttest.Spec(t, crewai.Type, tt.settings))
		if tt.err == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.settings, err)
			} else {
				_ = agent.Close(a)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: err = %v, want %q", tt.settings, err, tt.err)
		}
	}
}

// TestConfigErrorsAtLine: a wrong key under crewai: is an error naming
// the file, the line and the field.
func TestConfigErrorsAtLine(t *testing.T) {
	t.Parallel()
	y := "agents:\n  - name: crew\n    type: crewai\n    crewai:\n      url: https://crew.example.com\n      poll_intervall: 1s\n"
	c, err := config.Parse([]byte(y), "pactum.yaml")
	if err == nil {
		_, err = agent.New(t.Context(), agent.Spec(c.AgentSpec(c.Agents[0], "")))
	}
	if err == nil || !strings.Contains(err.Error(), "pactum.yaml:6") || !strings.Contains(err.Error(), "poll_intervall") {
		t.Errorf("err = %v, want one naming pactum.yaml:6 and poll_intervall", err)
	}
	y = "agents:\n  - name: crew\n    type: crewai\n    crewai:\n      url: https://crew.example.com\n      output: yaml\n"
	c, err = config.Parse([]byte(y), "pactum.yaml")
	if err == nil {
		// The node places a runtime's error as config.AgentError does.
		if _, err = agent.New(t.Context(), agent.Spec(c.AgentSpec(c.Agents[0], ""))); err != nil {
			err = c.AgentError(c.Agents[0], err).Err()
		}
	}
	if err == nil || !strings.Contains(err.Error(), `pactum.yaml:6:15: agents[0].crewai.output: must be text or json (got "yaml")`) {
		t.Errorf("err = %v", err)
	}
	y = "agents:\n  - name: crew\n    type: echo\n    crewai:\n      url: https://crew.example.com\n"
	if _, err = config.Parse([]byte(y), "pactum.yaml"); err == nil || !strings.Contains(err.Error(), `pactum.yaml:4:5: agents[0].crewai: settings for runtime type "crewai"`) {
		t.Errorf("crewai: under an echo agent: %v", err)
	}
}

// TestErrorAfterResumeIsPermanent: a retry cannot run a resumed execution
// again, so its failure ends the task.
func TestErrorAfterResumeIsPermanent(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, crewaitest.Steps(
		crewaitest.Step{Status: crewaitest.StatusPending, Task: "research_task", Output: "Draft"},
		crewaitest.Step{Status: crewaitest.StatusError, Output: "LLM quota exceeded"},
	))
	r := build(t, srv, "")
	req := agenttest.Request("AI")
	res, err := r.Invoke(t.Context(), req)
	if err != nil || !res.InputRequired {
		t.Fatalf("first attempt: %+v, %v", res, err)
	}
	ans := task.Message{ID: "a1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("ok")}}
	req.History = append(req.History, *res.Message, ans)
	req.Message = ans
	_, err = r.Invoke(t.Context(), req)
	if !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeAgentFailed || !strings.Contains(err.Error(), "LLM quota exceeded") {
		t.Errorf("err = %v (permanent %v)", err, task.IsPermanent(err))
	}
}
