package crewai_test

import (
	"strings"
	"testing"

	"github.com/pactum/pactum/agent/crewai"
)

// The seeds are the examples of CrewAI's OpenAPI document of the AMP API
// (docs/edge/enterprise-api.en.yaml in github.com/crewAIInc/crewAI), the
// paused state the stand-in reports, and shapes crews are seen to send.
var statusSeeds = []string{
	`{"status":"running","current_task":"research_task","progress":{"completed_tasks":1,"total_tasks":3}}`,
	`{"status":"completed","result":{"output":"Comprehensive travel itinerary...","tasks":[{"task_id":"research_task","output":"Research findings...","agent":"Travel Researcher","execution_time":45.2}]},"execution_time":108.5}`,
	`{"status":"error","error":"Task execution failed: Invalid API key for external service","execution_time":23.1}`,
	`{"status":"pending_human_input","current_task":"research_task","result":{"tasks":[{"task_id":"research_task","output":"Draft"}]}}`,
	`{"state":"SUCCESS","result":"{\"a\":1}"}`,
	`{"status":"Pending Human Input","task_id":"t","task_output":{"x":[1,2]}}`,
	`{"status":"completed","output":null}`,
	`{"status":"queued"}`,
	`{"status":7}`,
	`{"status":"completed","result":[1]}`,
	`[]`, `null`, ``, `{"status":"running"} {}`,
}

func FuzzDecodeStatus(f *testing.F) {
	for _, s := range statusSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := crewai.DecodeStatus(b)
		if err != nil {
			if st != nil {
				t.Errorf("a status with the error %v", err)
			}
			return
		}
		switch st.State {
		case crewai.Running, crewai.Failed:
		case crewai.Completed:
			if len(st.Result) == 0 {
				t.Errorf("completed without a result: %q", b)
			}
		case crewai.AwaitingFeedback:
			if st.Task == "" {
				t.Errorf("awaiting feedback on no task: %q", b)
			}
		default:
			t.Errorf("state %d", st.State)
		}
		if st.State == crewai.Failed && st.Error == "" {
			t.Errorf("failed without a message: %q", b)
		}
	})
}

func TestDecodeStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		state crewai.State
		want  string // Output, Error or Task+"|"+TaskOutput; "!" and an error's start for an error
	}{
		{statusSeeds[0], crewai.Running, ""},
		{statusSeeds[1], crewai.Completed, "Comprehensive travel itinerary..."},
		{statusSeeds[2], crewai.Failed, "Task execution failed: Invalid API key for external service"},
		{statusSeeds[3], crewai.AwaitingFeedback, "research_task|Draft"},
		{statusSeeds[4], crewai.Completed, `{"a":1}`},
		{statusSeeds[5], crewai.AwaitingFeedback, `t|{"x":[1,2]}`},
		{statusSeeds[6], 0, `!status response: "completed" with no result`},
		{statusSeeds[7], crewai.Running, ""},
		{statusSeeds[8], 0, `!status response: field "status"`},
		{statusSeeds[9], 0, `!status response: "result" is neither`},
		{`{"status":"paused"}`, 0, `!status response: unknown status "paused"`},
		{`{"status":"awaiting_human_feedback"}`, 0, `!status response: "awaiting_human_feedback" names no task`},
		{`{"current_task":"x"}`, 0, `!status response: no "status"`},
		{statusSeeds[10], 0, "!status response: not a JSON object"},
		{statusSeeds[13], 0, "!status response: invalid JSON: more than one value"},
	}
	for _, tt := range tests {
		st, err := crewai.DecodeStatus([]byte(tt.in))
		if strings.HasPrefix(tt.want, "!") {
			if err == nil || !strings.HasPrefix(err.Error(), tt.want[1:]) {
				t.Errorf("%s: err = %v, want %s…", tt.in, err, tt.want[1:])
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		got := st.Output
		switch st.State {
		case crewai.Failed:
			got = st.Error
		case crewai.AwaitingFeedback:
			got = st.Task + "|" + st.TaskOutput
		case crewai.Running:
			got = ""
		}
		if st.State != tt.state || got != tt.want {
			t.Errorf("%s: state %d %q, want %d %q", tt.in, st.State, got, tt.state, tt.want)
		}
	}
}

func FuzzDecodeKickoff(f *testing.F) {
	for _, s := range []string{
		`{"kickoff_id":"abcd1234-5678-90ef-ghij-klmnopqrstuv"}`,
		`{"kickoff_id":""}`, `{"kickoff_id":"../x"}`, `{"kickoff_id":1}`, `{}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := crewai.DecodeKickoff(b)
		if err != nil {
			return
		}
		if id == "" || strings.ContainsAny(id, "/?#% \n") {
			t.Errorf("kickoff id %q from %q", id, b)
		}
	})
}

func FuzzDecodeInputs(f *testing.F) {
	for _, s := range []string{
		`{"inputs":["budget","interests","duration","age"]}`, `{"inputs":[]}`, `{"inputs":[1]}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = crewai.DecodeInputs(b)
	})
}

func FuzzDecodeError(f *testing.F) {
	for _, s := range []string{
		`{"error":"Unauthorized","message":"Invalid or missing bearer token"}`,
		`{"error":"Validation Error","message":"Missing required inputs","details":{"missing_inputs":["budget","interests"]}}`,
		`{"detail":"Not Found"}`, `{"error":{"code":1}}`, `<html>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, ok := crewai.DecodeError(b)
		if ok && e.String() == "" {
			t.Errorf("an error body with no text: %q", b)
		}
		_, _ = crewai.DecodeResume(b)
	})
}

func TestDecodeError(t *testing.T) {
	t.Parallel()
	e, ok := crewai.DecodeError([]byte(`{"error":"Validation Error","message":"Missing required inputs","details":{"missing_inputs":["budget","interests"]}}`))
	if got := e.String(); !ok || got != "Validation Error: Missing required inputs (missing inputs: budget, interests)" {
		t.Errorf("%v %q", ok, got)
	}
	if _, ok := crewai.DecodeError([]byte(`<html>`)); ok {
		t.Error("html decoded as an error body")
	}
}
