package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/workflow"
)

// workflowConfig writes a configuration whose agents are the offline
// roles of examples/workflows.yaml (its shell scripts, by absolute path)
// and whose workflow "review" has a parallel phase, and returns its path.
func workflowConfig(t *testing.T) string {
	t.Helper()
	scripts, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "scripts", "workflow"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("agents:\n")
	for _, role := range []string{"planner", "code-reviewer", "security-reviewer", "explorer", "architect"} {
		fmt.Fprintf(&b, "  - {name: %s, type: exec, timeout: 30s, retry: {max_attempts: 2, initial_backoff: 100ms}, exec: {command: [sh, %q], input: stdin}}\n",
			role, filepath.Join(scripts, role+".sh"))
	}
	b.WriteString("workflows:\n  - name: review\n    steps: [planner, {parallel: [code-reviewer, security-reviewer]}, architect]\n")
	cfg := filepath.Join(t.TempDir(), "workflows.yaml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// jsCard and jsRun are the lines js/workflow.mjs prints.
type jsCard struct {
	Run    string   `json:"run"`
	Name   string   `json:"name"`
	Skills []string `json:"skills"`
}

type jsRun struct {
	Run      string `json:"run"`
	ID       string `json:"id"`
	State    string `json:"state"`
	Metadata struct {
		Pactum struct {
			Agent    string `json:"agent"`
			Children int    `json:"children"`
		} `json:"pactum"`
	} `json:"metadata"`
	Artifacts []jsArtifact `json:"artifacts"`
}

type jsArtifact struct {
	ArtifactID string          `json:"artifactId"`
	Name       string          `json:"name"`
	Text       string          `json:"text"`
	Data       json.RawMessage `json:"data"`
}

// TestJSClientWorkflow runs js/workflow.mjs: the official JavaScript
// client resolves the cards of workflow.feature, workflow.review (a
// parallel phase) and workflow.custom on a pactum subprocess whose agents
// are the example's shell scripts, sends each a blocking message (custom
// with its agents in metadata.pactum.agents) over JSON-RPC or HTTP+JSON,
// and prints the final tasks. Each run must be completed with the
// integration-report artifact: a text report that ParseReport reads, a
// data part equal to it, recommendation SHIP.
func TestJSClientWorkflow(t *testing.T) {
	t.Parallel()
	node, jsDir := jsClient(t)
	srv := setupWith(t, workflowConfig(t))

	runs := []struct {
		spec     string
		workflow string
		agent    string
		skills   []string
		agents   []string
	}{
		{"jsonrpc:feature", "feature", "workflow.feature", []string{"planner", "code-reviewer", "security-reviewer"}, []string{"planner", "code-reviewer", "security-reviewer"}},
		{"rest:review", "review", "workflow.review", []string{"planner", "code-reviewer", "security-reviewer", "architect"}, []string{"planner", "code-reviewer", "security-reviewer", "architect"}},
		{"jsonrpc:custom:explorer,code-reviewer", "custom", "workflow.custom", []string{"custom"}, []string{"explorer", "code-reviewer"}},
	}
	args := []string{"workflow.mjs", srv.URL}
	for _, r := range runs {
		args = append(args, r.spec)
	}
	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = jsDir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	logLines(t, out)
	if err != nil {
		t.Fatalf("node workflow.mjs: %v (see FAIL lines above)", err)
	}
	cards, results := map[string]jsCard{}, map[string]jsRun{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "CARD "):
			var c jsCard
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "CARD ")), &c); err != nil {
				t.Fatalf("CARD line: %v: %s", err, line)
			}
			cards[c.Run] = c
		case strings.HasPrefix(line, "RUN "):
			var r jsRun
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "RUN ")), &r); err != nil {
				t.Fatalf("RUN line: %v: %s", err, line)
			}
			results[r.Run] = r
		}
	}
	for _, want := range runs {
		t.Run(want.spec, func(t *testing.T) {
			c, ok := cards[want.spec]
			if !ok {
				t.Fatal("workflow.mjs printed no card")
			}
			if c.Name != want.agent || !slices.Equal(c.Skills, want.skills) {
				t.Errorf("card %q with skills %v, want %q with %v", c.Name, c.Skills, want.agent, want.skills)
			}
			r, ok := results[want.spec]
			if !ok {
				t.Fatal("workflow.mjs printed no run")
			}
			if r.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("run %s is %s, want TASK_STATE_COMPLETED", r.ID, r.State)
			}
			if r.Metadata.Pactum.Agent != want.agent || r.Metadata.Pactum.Children != len(want.agents) {
				t.Errorf("metadata.pactum: agent %q, children %d; want %q, %d", r.Metadata.Pactum.Agent, r.Metadata.Pactum.Children, want.agent, len(want.agents))
			}
			i := slices.IndexFunc(r.Artifacts, func(a jsArtifact) bool { return a.ArtifactID == workflow.ReportArtifact })
			if i < 0 {
				t.Fatalf("no artifact %s among %+v", workflow.ReportArtifact, r.Artifacts)
			}
			a := r.Artifacts[i]
			if a.Name != workflow.ReportArtifact {
				t.Errorf("artifact %s is named %q", a.ArtifactID, a.Name)
			}
			checkReport(t, a.Text, a.Data, want.workflow, want.agents)
		})
	}
}

// checkReport checks a run's report as a client read it: text parses with
// workflow.ParseReport, the data part says the same (and each step
// succeeded), the workflow and agents are those run, and it recommends
// SHIP.
func checkReport(t *testing.T, text string, data []byte, name string, agents []string) {
	t.Helper()
	fromText, err := workflow.ParseReport(text)
	if err != nil {
		t.Fatalf("ParseReport: %v\n%s", err, text)
	}
	var fromData workflow.Report
	if err := json.Unmarshal(data, &fromData); err != nil {
		t.Fatalf("data part: %v: %s", err, data)
	}
	if len(fromData.Steps) != len(agents) {
		t.Errorf("data part has %d steps, want %d", len(fromData.Steps), len(agents))
	}
	for i, s := range fromData.Steps {
		if s.Agent != agents[min(i, len(agents)-1)] || s.State != workflow.StateSucceeded || s.Handoff == nil {
			t.Errorf("step %d: %s %s (handoff %v), want %s succeeded with a handoff", i, s.Agent, s.State, s.Handoff != nil, agents[min(i, len(agents)-1)])
		}
	}
	// The text carries everything but the steps.
	fromData.Steps = nil
	if !reflect.DeepEqual(normalReport(fromText), normalReport(&fromData)) {
		t.Errorf("the text and the data part differ:\ntext: %+v\ndata: %+v", normalReport(fromText), normalReport(&fromData))
	}
	if fromText.Workflow != name || !slices.Equal(fromText.Agents, agents) {
		t.Errorf("report of workflow %q, agents %v; want %q, %v", fromText.Workflow, fromText.Agents, name, agents)
	}
	if fromText.Recommendation != workflow.Ship {
		t.Errorf("recommendation %s (reasons %v), want SHIP:\n%s", fromText.Recommendation, fromText.Reasons, text)
	}
}

// normalReport returns a copy of r with nil slices made empty, so that a
// report read from text and one decoded from JSON compare equal.
func normalReport(r *workflow.Report) workflow.Report {
	n := *r
	for _, s := range []*[]string{&n.Agents, &n.FilesChanged, &n.Reasons} {
		if *s == nil {
			*s = []string{}
		}
	}
	if n.AgentOutputs == nil {
		n.AgentOutputs = []workflow.AgentOutput{}
	}
	return n
}
