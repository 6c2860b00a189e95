package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pactum/pactum/task"
)

// wordsContract is a 2-step contract: split prints the words of the run's
// input as a JSON object on standard output (text, not a data part), which
// is the data resource words; count consumes words and counts the words
// of its request. count is retried with feedback when its answer is not
// "count: N".
const wordsContract = `version: "1.0"
id: words
resources:
  - id: sentence
    type: message
  - id: words
    type: data
    schema: {type: object, required: [words]}
steps:
  - id: split
    agent: splitter
    consumes: [sentence]
    creates: [words]
    assertions:
      - type: assert
        message: the answer is an object with the words
        check: {type: schema_match, target: output, schema: {type: object, required: [words]}}
  - id: count
    agent: counter
    dependsOn: [split]
    consumes: [words]
    onViolation: retry
    assertions:
      - type: assert
        message: the answer is "count:" and a number
        check: {type: regex, target: output, pattern: "^count: [0-9]+$"}
`

// wordsConfig serves the contract on two exec agents. The splitter prints
// JSON as text. The counter answers wrongly on its first attempt; on a
// later one it counts the words of its request, cutting its standard input
// at the first heading pactum adds to an attempt after feedback (the
// recipe of docs/runtimes.md).
const wordsConfig = `agents:
  - name: splitter
    type: exec
    exec:
      command: [sh, -c, 'printf "{\"words\": ["; sep=; for w in $(cat); do printf "%s\"%s\"" "$sep" "$w"; sep=", "; done; echo "]}"']
  - name: counter
    type: exec
    retry: {max_attempts: 3, initial_backoff: 10ms, max_backoff: 10ms}
    exec:
      command: [sh, -c, 'if [ "$1" = 1 ]; then cat >/dev/null; echo "I did not count"; else echo "count: $(sed "/^# Your previous answer (rejected)$/,\$d; /^# What to fix$/,\$d" | wc -w)"; fi', sh, "{{.Attempt}}"]
contracts:
  - CONTRACT
`

// TestContractRetryKeepsTheTask: a step's output printed as JSON text is
// the data resource the next step consumes, and a retried step gets its
// whole task again (its request, its rejected answer, the feedback): the
// counter counts the 4 words of the run's input after its retry, not the
// words of the feedback. Before, the run stopped at count ("resource words
// missing"); with the resource there, the retry counted the feedback.
func TestContractRetryKeepsTheTask(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cpath := filepath.Join(dir, "words.yaml")
	writeFile(t, cpath, wordsContract)
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, strings.ReplaceAll(wordsConfig, "CONTRACT", cpath))
	dsn := "sqlite://" + filepath.Join(dir, "pactum.db")

	out, err := run(t, "contract", "run", cpath, "the quick brown fox", "--config", cfg, "--store", dsn)
	if err != nil {
		t.Fatalf("contract run: %v\n%s", err, out)
	}
	for _, re := range []string{
		`(?m)^  split +passed`,
		`(?m)^  count +passed`,
		`(?m)^contract words: every step verified$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}

	parent := regexp.MustCompile(`(?m)^run (\S+) of contract`).FindStringSubmatch(out)
	if parent == nil {
		t.Fatalf("no run id in:\n%s", out)
	}
	_, steps := liveVerdicts(t, dsn, parent[1])
	count := steps["count"]
	if count == nil {
		t.Fatalf("no count step among %d children", len(steps))
	}
	if got := strings.TrimSpace(artifactText(count)); got != "count: 4" || count.Attempt != 2 {
		t.Fatalf("count answered %q on attempt %d, want \"count: 4\" on attempt 2", got, count.Attempt)
	}
	// The resource reached count as a data part of its input.
	var words string
	for _, p := range count.Envelope.Input.Parts {
		if p.Kind == task.PartData {
			words = string(p.Data)
		}
	}
	if words != `{"words":["the","quick","brown","fox"]}` {
		t.Errorf("count's input data part %q", words)
	}
}

// TestMissingResourceSaysWhy: when the step that creates a data resource
// answers text that is not JSON, the consuming step's pre-gate names that
// step and what it answered, not only "resource words missing".
func TestMissingResourceSaysWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cpath := filepath.Join(dir, "words.yaml")
	// split has no assertion here, so its plain-text answer passes.
	writeFile(t, cpath, strings.Replace(wordsContract, `    assertions:
      - type: assert
        message: the answer is an object with the words
        check: {type: schema_match, target: output, schema: {type: object, required: [words]}}
`, "", 1))
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, strings.ReplaceAll(strings.Replace(wordsConfig,
		`command: [sh, -c, 'printf "{\"words\": ["; sep=; for w in $(cat); do printf "%s\"%s\"" "$sep" "$w"; sep=", "; done; echo "]}"']`,
		`command: [sh, -c, 'cat; echo']`, 1), "CONTRACT", cpath))
	dsn := "sqlite://" + filepath.Join(dir, "pactum.db")

	code, stdout, stderr := runMain("contract", "run", cpath, "the quick brown fox", "--config", cfg, "--store", dsn)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := `resource words missing: step split (task `
	both := stdout + stderr
	if !strings.Contains(both, want) || !strings.Contains(both, `answered text that is not a JSON object or array: "the quick brown fox`) {
		t.Errorf("output does not say why words is missing (want %q and what split answered):\nstdout:\n%s\nstderr:\n%s", want, stdout, stderr)
	}
}

// TestWorkflowWebhookRetryKeepsTheTask: a webhook agent (an n8n-like flow
// on loopback that reads only chatInput's "Expected heading:" line) whose
// first handoff misses a section gets, on its retry, its first message
// again in chatInput (so the heading line is still there), its rejected
// answer and the feedback, and the structured retry field; it recovers
// and the run ships. Before, chatInput was the feedback alone: no heading,
// and the run ended BLOCKED.
func TestWorkflowWebhookRetryKeepsTheTask(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	heading := regexp.MustCompile(`(?m)^Expected heading: (.*)$`)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ChatInput string `json:"chatInput"`
			Retry     *struct {
				Request  task.Message   `json:"request"`
				Answer   *task.Message  `json:"answer"`
				Feedback []task.Message `json:"feedback"`
			} `json:"retry"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		n := calls.Add(1)
		h := heading.FindAllStringSubmatch(body.ChatInput, -1)
		if len(h) != 1 {
			t.Errorf("call %d: %d Expected heading lines in chatInput:\n%s", n, len(h), body.ChatInput)
			http.Error(w, "no heading", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		if n == 1 {
			fmt.Fprintf(w, "%s\n\n### Context\nFirst try.\n\n### Findings\n- Looked.\n\n### Files Modified\nNone\n\n### Recommendations\nNone\n", h[0][1])
			return
		}
		if body.Retry == nil || body.Retry.Answer == nil || !strings.Contains(body.Retry.Answer.Text(), "First try.") ||
			len(body.Retry.Feedback) != 1 || !strings.Contains(body.Retry.Feedback[0].Text(), `"Open Questions"`) ||
			!strings.HasPrefix(body.Retry.Request.Text(), "# Task\nFix the crash") {
			t.Errorf("call %d: retry field %+v", n, body.Retry)
		}
		if !strings.Contains(body.ChatInput, "\n# Your previous answer (rejected)\n") || !strings.Contains(body.ChatInput, "\n# What to fix\n") {
			t.Errorf("call %d: chatInput is not the whole task:\n%s", n, body.ChatInput)
		}
		fmt.Fprintf(w, "%s\n\n### Context\nSecond try.\n\n### Findings\n- Looked.\n\n### Files Modified\nNone\n\n### Open Questions\nNone\n\n### Recommendations\nNone\n", h[0][1])
	}))
	defer hook.Close()

	cfg := scriptedConfig(t, "explorer=ok", "architect=ok")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg, string(b)+fmt.Sprintf(`  - name: hook
    type: webhook
    retry: {max_attempts: 2, initial_backoff: 10ms}
    webhook: {url: %q, allow_private: true}
`, hook.URL+"/flow"))
	r := pactumRun(t, tempStore(t), cfg, "custom", "Fix the crash", "--agents", "explorer,hook,architect")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (SHIP)", r.code)
	}
	if liveLine(r.stdout, "hook", "retried") < 0 || calls.Load() != 2 {
		t.Errorf("hook was not retried once (%d calls)", calls.Load())
	}
}
