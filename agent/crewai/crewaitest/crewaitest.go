// Package crewaitest stands in for a crew deployed on CrewAI AMP, for
// tests of the crewai runtime. CrewAI AMP is a hosted service and CrewAI
// itself cannot run here (no PyPI), so this server was written for the
// tests from CrewAI's published OpenAPI document of the AMP REST API,
// docs/edge/enterprise-api.en.yaml in github.com/crewAIInc/crewAI (commit
// f4731f5025f861c78e3af0487cc80bf5e7c64782, August 2026; identical to
// docs/v1.15.17/enterprise-api.en.yaml), and its guide to human-in-the-loop
// workflows (docs/edge/en/learn/human-in-the-loop.mdx):
//
//   - every call needs Authorization: Bearer <token>, else 401 with the
//     document's Error body {"error": "Unauthorized", "message": …};
//   - GET /inputs answers {"inputs": [names]};
//   - POST /kickoff takes {"inputs": {name: string}, "meta": {…},
//     taskWebhookUrl, stepWebhookUrl, crewWebhookUrl, restoreFromStateId},
//     answers {"kickoff_id": uuid}, 400 for a malformed body and 422 with
//     the document's ValidationError (details.missing_inputs) when required
//     inputs are missing;
//   - GET /status/{kickoff_id} answers ExecutionRunning
//     {"status": "running", "current_task", "progress"}, ExecutionCompleted
//     {"status": "completed", "result": {"output", "tasks"}, "execution_time"}
//     or ExecutionError {"status": "error", "error", "execution_time"}, and
//     404 {"error": "Execution not found", …} for an unknown id;
//   - POST /resume takes {"execution_id", "task_id", "human_feedback",
//     "is_approve"} (all four required), answers {"status": "resumed" or
//     "retrying", "message"}, 400 "Execution is not in pending human input
//     state" and 404 for an unknown execution or task.
//
// The document's status schema has no paused state; the HITL guide says
// the execution pauses "in the Pending Human Input state". This server
// reports it as {"status": "pending_human_input", "current_task": <task>,
// "result": {"tasks": [{"task_id": <task>, "output": <its output>}]}},
// the document's own fields.
package crewaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Status names of the document (and the HITL guide's paused state).
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusError     = "error"
	StatusPending   = "pending_human_input"
)

// Step is one state of a scripted execution. A running step is shown to
// one status call, then the next step follows; a pending step holds until
// POST /resume names its task; completed and error steps are final.
type Step struct {
	Status string
	// Task is the task running or awaiting feedback.
	Task string
	// Output is the final output (completed), the task's output to review
	// (pending) or the error message (error).
	Output string
}

// Kickoff is a kickoff the server received.
type Kickoff struct {
	ID     string
	Inputs map[string]string
	Meta   map[string]any
}

// Resume is a resume the server received.
type Resume struct {
	ExecutionID   string `json:"execution_id"`
	TaskID        string `json:"task_id"`
	HumanFeedback string `json:"human_feedback"`
	IsApprove     bool   `json:"is_approve"`
}

// Server is a scripted crew. Set its fields before the first call.
type Server struct {
	*httptest.Server
	// Token is the bearer token every call must carry.
	Token string
	// Inputs are the crew's required inputs (GET /inputs; a kickoff
	// without them gets 422).
	Inputs []string
	// Script returns the steps of the execution a kickoff starts.
	Script func(inputs map[string]string) []Step

	t        testing.TB
	mu       sync.Mutex
	execs    map[string]*execution
	kickoffs []Kickoff
	resumes  []Resume
	faults   map[string][]int
	calls    map[string]int
	nextID   int
	wire     bytes.Buffer
}

type execution struct {
	steps []Step
	at    int
}

// New starts a server whose crew needs token and runs script; it stops
// when the test ends.
func New(t testing.TB, token string, script func(inputs map[string]string) []Step) *Server {
	s := &Server{Token: token, Script: script, t: t, execs: map[string]*execution{}, faults: map[string][]int{}, calls: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Steps is a script that runs steps whatever the inputs.
func Steps(steps ...Step) func(map[string]string) []Step {
	return func(map[string]string) []Step { return steps }
}

// Fail makes the next calls of route ("inputs", "kickoff", "status",
// "resume") answer the given statuses, one each, with the document's
// Error body.
func (s *Server) Fail(route string, statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], statuses...)
}

// Kickoffs returns the kickoffs received so far.
func (s *Server) Kickoffs() []Kickoff {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.kickoffs)
}

// Resumes returns the resumes received so far.
func (s *Server) Resumes() []Resume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.resumes)
}

// Transcript returns every exchange so far: for each call, its method,
// path, whether it carried the right bearer token, its body, then the
// response's status and body. The token itself is never written.
func (s *Server) Transcript() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wire.String()
}

// recorder keeps what a handler writes, for the transcript.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Calls returns the number of calls of route received so far.
func (s *Server) Calls(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[route]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, title, msg string) {
	writeJSON(w, status, map[string]string{"error": title, "message": msg})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	s.route(rec, r)
	s.mu.Lock()
	defer s.mu.Unlock()
	auth := "no token"
	switch h := r.Header.Get("Authorization"); {
	case h == "Bearer "+s.Token:
		auth = "Bearer <token>"
	case h != "":
		auth = "Bearer <another token>"
	}
	fmt.Fprintf(&s.wire, "> %s %s (%s)\n", r.Method, r.URL.Path, auth)
	if len(body) > 0 {
		fmt.Fprintf(&s.wire, "> %s\n", bytes.TrimSpace(body))
	}
	fmt.Fprintf(&s.wire, "< %d %s\n\n", rec.status, bytes.TrimSpace(rec.body.Bytes()))
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	var route string
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/inputs":
		route = "inputs"
	case r.Method == http.MethodPost && r.URL.Path == "/kickoff":
		route = "kickoff"
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/status/"):
		route = "status"
	case r.Method == http.MethodPost && r.URL.Path == "/resume":
		route = "resume"
	default:
		s.t.Errorf("crewaitest: unexpected %s %s", r.Method, r.URL.Path)
		writeError(w, http.StatusNotFound, "Not Found", "The requested resource was not found")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[route]++
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "Invalid or missing bearer token")
		return
	}
	if f := s.faults[route]; len(f) > 0 {
		s.faults[route] = f[1:]
		writeError(w, f[0], http.StatusText(f[0]), "scripted failure")
		return
	}
	if r.Method == http.MethodPost && r.Header.Get("Content-Type") != "application/json" {
		s.t.Errorf("crewaitest: %s with Content-Type %q", route, r.Header.Get("Content-Type"))
	}
	switch route {
	case "inputs":
		writeJSON(w, http.StatusOK, map[string][]string{"inputs": s.Inputs})
	case "kickoff":
		s.kickoff(w, r)
	case "status":
		s.status(w, strings.TrimPrefix(r.URL.Path, "/status/"))
	case "resume":
		s.resume(w, r)
	}
}

func (s *Server) kickoff(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Inputs             map[string]string `json:"inputs"`
		Meta               map[string]any    `json:"meta"`
		TaskWebhookURL     string            `json:"taskWebhookUrl"`
		StepWebhookURL     string            `json:"stepWebhookUrl"`
		CrewWebhookURL     string            `json:"crewWebhookUrl"`
		RestoreFromStateID string            `json:"restoreFromStateId"`
	}
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(&body); err != nil {
		s.t.Errorf("crewaitest: kickoff body: %v", err)
		writeError(w, http.StatusBadRequest, "Invalid Request", err.Error())
		return
	}
	if body.Inputs == nil {
		s.t.Errorf("crewaitest: kickoff without inputs")
		writeError(w, http.StatusBadRequest, "Invalid Request", "inputs is required")
		return
	}
	var missing []string
	for _, k := range s.Inputs {
		if _, ok := body.Inputs[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"error": "Validation Error", "message": "Missing required inputs",
			"details": map[string]any{"missing_inputs": missing},
		})
		return
	}
	s.nextID++
	id := fmt.Sprintf("abcd%04d-5678-40ef-8abc-0123456789ab", s.nextID)
	s.kickoffs = append(s.kickoffs, Kickoff{ID: id, Inputs: body.Inputs, Meta: body.Meta})
	s.execs[id] = &execution{steps: s.Script(body.Inputs)}
	writeJSON(w, http.StatusOK, map[string]string{"kickoff_id": id})
}

func (s *Server) status(w http.ResponseWriter, id string) {
	e, ok := s.execs[id]
	if !ok {
		writeError(w, http.StatusNotFound, "Execution not found", "No execution found with ID: "+id)
		return
	}
	if e.at >= len(e.steps) {
		writeJSON(w, http.StatusOK, map[string]any{"status": StatusRunning})
		return
	}
	st := e.steps[e.at]
	switch st.Status {
	case StatusRunning:
		writeJSON(w, http.StatusOK, map[string]any{
			"status": StatusRunning, "current_task": st.Task,
			"progress": map[string]int{"completed_tasks": e.at, "total_tasks": len(e.steps)},
		})
		e.at++
	case StatusCompleted:
		writeJSON(w, http.StatusOK, map[string]any{
			"status":         StatusCompleted,
			"result":         map[string]any{"output": st.Output, "tasks": []map[string]any{{"task_id": st.Task, "output": st.Output, "agent": "Writer", "execution_time": 1.5}}},
			"execution_time": 2.5,
		})
	case StatusError:
		writeJSON(w, http.StatusOK, map[string]any{"status": StatusError, "error": st.Output, "execution_time": 0.5})
	case StatusPending:
		writeJSON(w, http.StatusOK, map[string]any{
			"status": StatusPending, "current_task": st.Task,
			"result": map[string]any{"tasks": []map[string]any{{"task_id": st.Task, "output": st.Output}}},
		})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"status": st.Status})
	}
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ExecutionID    *string `json:"execution_id"`
		TaskID         *string `json:"task_id"`
		HumanFeedback  *string `json:"human_feedback"`
		IsApprove      *bool   `json:"is_approve"`
		TaskWebhookURL string  `json:"taskWebhookUrl"`
		StepWebhookURL string  `json:"stepWebhookUrl"`
		CrewWebhookURL string  `json:"crewWebhookUrl"`
	}
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(&body); err != nil || body.ExecutionID == nil || body.TaskID == nil || body.HumanFeedback == nil || body.IsApprove == nil {
		s.t.Errorf("crewaitest: resume body (err %v): execution_id, task_id, human_feedback and is_approve are required", err)
		writeError(w, http.StatusBadRequest, "Invalid Request", "execution_id, task_id, human_feedback and is_approve are required")
		return
	}
	e, ok := s.execs[*body.ExecutionID]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", "Execution ID not found")
		return
	}
	if e.at >= len(e.steps) || e.steps[e.at].Status != StatusPending {
		writeError(w, http.StatusBadRequest, "Invalid Request", "Execution is not in pending human input state")
		return
	}
	if e.steps[e.at].Task != *body.TaskID {
		writeError(w, http.StatusNotFound, "Not Found", "Task ID not found")
		return
	}
	s.resumes = append(s.resumes, Resume{ExecutionID: *body.ExecutionID, TaskID: *body.TaskID, HumanFeedback: *body.HumanFeedback, IsApprove: *body.IsApprove})
	e.at++
	status, msg := "resumed", "Execution resumed successfully"
	if !*body.IsApprove {
		status, msg = "retrying", "Task will be retried with your feedback"
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": status, "message": msg})
}
