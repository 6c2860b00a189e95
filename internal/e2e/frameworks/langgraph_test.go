//go:build unix

package frameworks_test

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
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pactum/pactum/agent/langgraph"
	"github.com/pactum/pactum/agent/langgraph/langgraphtest"
	"github.com/pactum/pactum/internal/e2e/mdblock"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
)

const (
	// The addresses the document uses; the test gives each a free port.
	docAgentServer = "127.0.0.1:2024"
	docPactum      = "127.0.0.1:9000"
	// agentName is the pactum agent serving the graph in the document.
	agentName = "report"
	// scriptTimeout bounds one block of commands.
	scriptTimeout = 3 * time.Minute
)

// doc is docs/frameworks.md.
type doc string

func readDoc(t *testing.T) doc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "frameworks.md"))
	if err != nil {
		t.Fatal(err)
	}
	return doc(b)
}

// block returns the ```lang block between <!-- frameworks-NAME --> and
// <!-- /frameworks-NAME -->.
func (d doc) block(t *testing.T, name, lang string) string {
	t.Helper()
	s, err := mdblock.Extract(string(d), "<!-- frameworks-"+name+" -->", "<!-- /frameworks-"+name+" -->", lang, name)
	if err != nil {
		t.Fatalf("docs/frameworks.md: %v", err)
	}
	return s
}

// TestInstallPinned: the walk-through installs the versions the test
// runs, those pinned in agent/langgraph/testdata/js and
// internal/e2e/interop/js.
func TestInstallPinned(t *testing.T) {
	t.Parallel()
	install := readDoc(t).block(t, "install", "sh")
	for _, pkg := range []string{
		"../../../agent/langgraph/testdata/js/package.json",
		"../interop/js/package.json",
	} {
		var p struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.FromSlash(pkg))), &p); err != nil {
			t.Fatal(err)
		}
		for name, version := range p.Dependencies {
			if !strings.Contains(install, " "+name+"@"+version+" ") {
				t.Errorf("the install line does not name %s@%s (pinned in %s):\n%s", name, version, pkg, install)
			}
		}
	}
}

// TestLangGraphWalkthrough runs docs/frameworks.md: a graph of three
// nodes on the real LangGraph JS Agent Server, its JSON imported as a
// contract by the real binary, tightened as the document says, served
// by `pactum serve` with the contract's last step as the agent's live
// gate, called by the official A2A JS client; then the thread's history
// becomes a trace that `pactum verify` passes, an answer the live gate
// refuses fails its task, and a contract the run does not meet fails
// verify.
func TestLangGraphWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a LangGraph Agent Server, pactum and node; skipped with -short")
	}
	for _, tool := range []string{"bash", "curl", "grep", "sed", "cut"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walk-through needs %s on PATH: %v", tool, err)
		}
	}
	d := readDoc(t)
	sdk := jsClientModules(t)

	// The Agent Server, serving the document's graph.
	if got, want := strings.TrimSpace(d.block(t, "agent-server", "sh")), "npx langgraphjs dev --port 2024 --host 127.0.0.1 --no-browser"; got != want {
		t.Fatalf("the Agent Server's command is %q; the test starts %q (langgraphtest)", got, want)
	}
	lg := langgraphtest.StartWith(t, map[string][]byte{
		"graph.js":       []byte(d.block(t, "graph", "js")),
		"langgraph.json": []byte(d.block(t, "langgraph-json", "json")),
	})
	lgURL, err := url.Parse(lg.URL)
	if err != nil {
		t.Fatal(err)
	}
	addr := nodeproc.FreeAddr(t)
	subst := strings.NewReplacer(docAgentServer, lgURL.Host, docPactum, addr)

	bin := nodeproc.Build(t, nodeproc.Pactum)
	dir := t.TempDir()
	if err := os.Symlink(sdk, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "package.json"), `{"private": true, "type": "module"}`)
	writeFile(t, filepath.Join(dir, "send.mjs"), d.block(t, "send", "js"))
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))

	// 1. Import the graph as a contract, every step on the agent.
	importBlock := d.block(t, "import", "sh")
	out, code := runScript(t, dir, env, subst.Replace(importBlock))
	if code != 0 {
		t.Fatalf("the import block exited %d:\n%s", code, out)
	}
	imported := readFile(t, filepath.Join(dir, "report.contract.yaml"))
	for _, step := range []string{"research", "write", "review"} {
		if !strings.Contains(imported, "  - id: "+step+"\n    agent: "+agentName+"\n") {
			t.Fatalf("the imported contract has no step %s run by agent %s:\n%s", step, agentName, imported)
		}
	}
	if !strings.Contains(imported, "dependsOn:\n      - research\n") || !strings.Contains(imported, "dependsOn:\n      - write\n") {
		t.Fatalf("the imported contract does not follow the graph's edges:\n%s", imported)
	}

	// Imported without --agent, the contract's steps name the graph's
	// nodes, which are not pactum agents: the configuration refuses it,
	// as the document says.
	cfg := subst.Replace(d.block(t, "config", "yaml"))
	asIs := withoutAgent(t, lineWith(importBlock, "pactum contract import "))
	if out, code := runScript(t, dir, env, asIs); code != 0 {
		t.Fatalf("%s exited %d:\n%s", asIs, code, out)
	}
	for _, step := range []string{"research", "write", "review"} {
		if c := readFile(t, filepath.Join(dir, "asis.contract.yaml")); !strings.Contains(c, "  - id: "+step+"\n    agent: "+step+"\n") {
			t.Fatalf("imported without --agent, the contract has no step %s run by agent %s:\n%s", step, step, c)
		}
	}
	asIsCfg := strings.Replace(cfg, "file: report.contract.yaml", "file: asis.contract.yaml", 1)
	if asIsCfg == cfg {
		t.Fatalf("the configuration does not name report.contract.yaml:\n%s", cfg)
	}
	writeFile(t, filepath.Join(dir, "asis.yaml"), asIsCfg)
	check := exec.Command(bin, "config", "check", filepath.Join(dir, "asis.yaml"))
	if b, err := check.CombinedOutput(); err == nil || !bytes.Contains(b, []byte(`steps[0].agent: agent "research" is not configured`)) {
		t.Errorf("config check with the contract imported without --agent: %v\n%s", err, b)
	}
	writeFile(t, filepath.Join(dir, "pactum.yaml"), cfg)

	// 2. Tighten it: assertions on research and review.
	tightened := tighten(t, imported, map[string]string{
		"research": d.block(t, "assert-research", "yaml"),
		"review":   d.block(t, "assert-review", "yaml"),
	})
	writeFile(t, filepath.Join(dir, "report.contract.yaml"), tightened)

	// 3. Serve the graph with the contract on its agent.
	if !strings.Contains(cfg, lg.URL) || !strings.Contains(cfg, "listen: "+addr) {
		t.Fatalf("the configuration does not name the Agent Server and pactum's address of the document:\n%s", cfg)
	}
	serve := strings.Fields(d.block(t, "serve", "sh"))
	if strings.Join(serve, " ") != "pactum serve --config pactum.yaml" {
		t.Fatalf("the serve command is %q", serve)
	}
	srv := nodeproc.Start(t, bin, addr, filepath.Join(dir, "pactum.log"), "serve", "--config", filepath.Join(dir, "pactum.yaml"))
	defer srv.Stop()

	// 4. Call it with the official A2A JS client, verify the run.
	out, code = runScript(t, dir, env, subst.Replace(d.block(t, "run", "sh")))
	t.Logf("the run block printed:\n%s", out)
	if code != 0 {
		t.Fatalf("the run block exited %d (pactum's log: %s)", code, readFile(t, srv.Log))
	}
	if !strings.Contains(out, "report.contract.yaml: ok (3 steps, 3 assertions)") {
		t.Errorf("contract check did not pass the tightened contract")
	}
	sent := sentTask(t, out)
	if sent.State != "TASK_STATE_COMPLETED" {
		t.Errorf("the task ended %s, want completed", sent.State)
	}
	if want := "# Report on pactum\n\nfacts: pactum is one Go binary.\n\nReviewed: approved"; sent.Answer != want {
		t.Errorf("the answer is %q, want %q", sent.Answer, want)
	}
	if sent.Passed == nil || !*sent.Passed {
		t.Errorf("the live gate's verdict on the task is %v, want passed", sent.Passed)
	}
	if got, want := strings.TrimPrefix(lineWith(out, "thread "), "thread "), langgraph.ThreadID(agentName, sent.ContextID); got != want {
		t.Errorf("the thread found by its metadata is %q; langgraph.ThreadID(%q, %q) is %q", got, agentName, sent.ContextID, want)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^step research +passed +task \S+ \(agent research, succeeded\) +1 check,`),
		regexp.MustCompile(`(?m)^step write +passed +task \S+ \(agent write, succeeded\) +0 checks,`),
		regexp.MustCompile(`(?m)^step review +passed +task \S+ \(agent review, succeeded\) +2 checks,`),
		regexp.MustCompile(`(?m)^passed: 3 of 3 steps passed$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("verify printed no line matching %s", want)
		}
	}
	// Live, every node was checked against its step, as verify did
	// offline: pactum tasks timeline lists the three verdicts.
	cfgPath := filepath.Join(dir, "pactum.yaml")
	if got, want := liveVerdicts(t, bin, cfgPath, sent.Task), []string{"research:passed", "write:passed", "review:passed"}; !slices.Equal(got, want) {
		t.Errorf("the live verdicts of the task are %v, want %v", got, want)
	}
	// The newest live verdict is the one shown with the task: pactum
	// tasks get shows it.
	get := exec.Command(bin, "tasks", "get", sent.Task, "--config", filepath.Join(dir, "pactum.yaml"))
	if b, err := get.CombinedOutput(); err != nil || !bytes.Contains(b, []byte("verdict  passed (contract report, step review")) {
		t.Errorf("pactum tasks get %s: %v\n%s", sent.Task, err, b)
	}

	// An answer the live gate refuses fails the task.
	out, code = runScript(t, dir, env, subst.Replace(d.block(t, "refused", "sh")))
	if code != 0 {
		t.Fatalf("the refused block exited %d:\n%s", code, out)
	}
	refused := sentTask(t, out)
	if refused.State != "TASK_STATE_FAILED" || refused.Passed == nil || *refused.Passed {
		t.Errorf("the refused answer: state %s, verdict %v; want failed, not passed", refused.State, refused.Passed)
	}
	if want := `the reviewer approved the report (output does not contain "Reviewed: approved")`; !strings.Contains(refused.Reason, want) {
		t.Errorf("the refused task's reason is %q, want it to name %q", refused.Reason, want)
	}
	if !strings.Contains(string(d), refused.Reason) {
		t.Errorf("docs/frameworks.md does not show the refused task's reason %q", refused.Reason)
	}
	// Live and offline agree on the refused run, node by node.
	if got, want := liveVerdicts(t, bin, cfgPath, refused.Task), []string{"research:passed", "write:passed", "review:failed"}; !slices.Equal(got, want) {
		t.Errorf("the live verdicts of the refused task are %v, want %v", got, want)
	}
	if got, want := offlineVerdicts(t, bin, dir, lg.URL, refused.ContextID, "report.contract.yaml"), []string{"research:passed", "write:passed", "review:failed"}; !slices.Equal(got, want) {
		t.Errorf("verify of the refused run's history: %v, want %v", got, want)
	}

	// 5. A contract the run does not meet.
	strict := insertUnder(t, tightened, "write", d.block(t, "assert-strict", "yaml"))
	writeFile(t, filepath.Join(dir, "strict.contract.yaml"), strict)
	out, code = runScript(t, dir, env, subst.Replace(d.block(t, "strict", "sh")))
	if code != 1 {
		t.Fatalf("verify of the strict contract exited %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{
		"step write     failed",
		`failed   [assert contains] the report is approved: output does not contain "Reviewed: approved"`,
		"failed: 2 of 3 steps passed",
		"pactum: contract report not met: write failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify of the strict contract did not print %q:\n%s", want, out)
		}
	}

	// Live, the strict contract refuses the write node: a second pactum
	// serves the graph with it, on a store of its own.
	strictAddr := nodeproc.FreeAddr(t)
	strictCfg := strings.NewReplacer("report.contract.yaml", "strict.contract.yaml", "listen: "+addr, "listen: "+strictAddr, "pactum.db", "strict.db").Replace(cfg)
	if !strings.Contains(strictCfg, "strict.contract.yaml") || !strings.Contains(strictCfg, "strict.db") {
		t.Fatalf("could not point the configuration at the strict contract:\n%s", strictCfg)
	}
	strictPath := filepath.Join(dir, "strict.yaml")
	writeFile(t, strictPath, strictCfg)
	srv2 := nodeproc.Start(t, bin, strictAddr, filepath.Join(dir, "strict.log"), "serve", "--config", strictPath)
	defer srv2.Stop()
	out, code = runScript(t, dir, env, "node send.mjs http://"+strictAddr+"/agents/"+agentName+" pactum")
	if code != 0 {
		t.Fatalf("send to the strict agent exited %d:\n%s", code, out)
	}
	strictSent := sentTask(t, out)
	wantReason := `contract report step write violated: the report is approved (output does not contain "Reviewed: approved")`
	if strictSent.State != "TASK_STATE_FAILED" || strictSent.Reason != wantReason {
		t.Errorf("served with the strict contract: state %s, reason %q; want failed, %q", strictSent.State, strictSent.Reason, wantReason)
	}
	if !strings.Contains(string(d), wantReason) {
		t.Errorf("docs/frameworks.md does not show the strict task's reason %q", wantReason)
	}
	if got, want := liveVerdicts(t, bin, strictPath, strictSent.Task), []string{"research:passed", "write:failed"}; !slices.Equal(got, want) {
		t.Errorf("the live verdicts under the strict contract are %v, want %v", got, want)
	}
	// Offline, the same history says the same of research and write
	// (review may have run before the cancel arrived: it is judged
	// offline then, and passes, or reported not run).
	off := offlineVerdicts(t, bin, dir, lg.URL, strictSent.ContextID, "strict.contract.yaml")
	if len(off) < 2 || off[0] != "research:passed" || off[1] != "write:failed" {
		t.Errorf("verify of the strict run's history: %v, want research passed and write failed", off)
	}
}

// liveVerdicts returns "step:passed" or "step:failed" for each verdict
// the live gates recorded on the task, oldest first, from pactum tasks
// timeline --json.
func liveVerdicts(t *testing.T, bin, cfg, id string) []string {
	t.Helper()
	b, err := exec.Command(bin, "tasks", "timeline", id, "--json", "--config", cfg).Output()
	if err != nil {
		t.Fatalf("pactum tasks timeline %s: %v", id, err)
	}
	var entries []struct {
		Evidence []struct {
			Step, Kind string
			Data       json.RawMessage
		} `json:"evidence"`
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatalf("timeline %s: %v", b, err)
	}
	var out []string
	for _, e := range entries {
		for _, ev := range e.Evidence {
			if ev.Step != "contract" || ev.Kind != "verdict" {
				continue
			}
			var vr struct {
				Step         string `json:"step"`
				Verification struct {
					Passed bool `json:"passed"`
				} `json:"verification"`
			}
			if err := json.Unmarshal(ev.Data, &vr); err != nil {
				t.Fatalf("verdict %s: %v", ev.Data, err)
			}
			out = append(out, vr.Step+":"+map[bool]string{true: "passed", false: "failed"}[vr.Verification.Passed])
		}
	}
	return out
}

// offlineVerdicts reads the history of the conversation's thread from
// the Agent Server at base, turns it into a trace (pactum contract trace
// --from langgraph) and verifies it against the contract file (pactum
// verify --json), returning "step:status" for each step.
func offlineVerdicts(t *testing.T, bin, dir, base, contextID, contractFile string) []string {
	t.Helper()
	thread := langgraph.ThreadID(agentName, contextID)
	resp, err := http.Post(base+"/threads/"+thread+"/history", "application/json", strings.NewReader(`{"limit": 100}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("history of thread %s: %d %v %s", thread, resp.StatusCode, err, body)
	}
	hist := filepath.Join(dir, "history-"+contextID+".json")
	writeFile(t, hist, string(body))
	tr := filepath.Join(dir, "trace-"+contextID+".json")
	if b, err := exec.Command(bin, "contract", "trace", hist, "--from", "langgraph", "--out", tr).CombinedOutput(); err != nil {
		t.Fatalf("contract trace: %v\n%s", err, b)
	}
	b, _ := exec.Command(bin, "verify", "--contract", filepath.Join(dir, contractFile), "--trace", tr, "--json").Output()
	var rep struct {
		Steps []struct {
			Step, Status string
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("verify --json printed %s: %v", b, err)
	}
	var out []string
	for _, s := range rep.Steps {
		out = append(out, s.Step+":"+s.Status)
	}
	return out
}

// sent is what send.mjs prints.
type sent struct {
	Task, ContextID, State, Answer, Reason string
	Passed                                 *bool
}

// sentTask decodes the line send.mjs printed in out.
func sentTask(t *testing.T, out string) sent {
	t.Helper()
	var s sent
	line := lineWith(out, `{"task":`)
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		t.Fatalf("send.mjs printed %q: %v\n%s", line, err, out)
	}
	return s
}

var agentLine = regexp.MustCompile(`(?m)^  - id: (\S+)\n    agent: \S+\n`)

// withoutAgent returns the document's import command without its
// --agent, writing to asis.contract.yaml.
func withoutAgent(t *testing.T, cmd string) string {
	t.Helper()
	flag := " --agent " + agentName + " "
	out := " --out report.contract.yaml"
	if !strings.Contains(cmd, flag) || !strings.HasSuffix(cmd, out) {
		t.Fatalf("the import command %q has no %q or does not end in %q", cmd, flag, out)
	}
	return strings.TrimSuffix(strings.Replace(cmd, flag, " ", 1), out) + " --out asis.contract.yaml"
}

// tighten applies the document's edit to the imported contract: each step
// of frags gets its assertions under its agent line.
func tighten(t *testing.T, imported string, frags map[string]string) string {
	t.Helper()
	out := imported
	for step, frag := range frags {
		out = insertUnder(t, out, step, frag)
	}
	return out
}

// insertUnder inserts frag under the agent line of step.
func insertUnder(t *testing.T, yaml, step, frag string) string {
	t.Helper()
	for _, m := range agentLine.FindAllStringSubmatchIndex(yaml, -1) {
		if yaml[m[2]:m[3]] == step {
			return yaml[:m[1]] + frag + yaml[m[1]:]
		}
	}
	t.Fatalf("no step %s with an agent line in:\n%s", step, yaml)
	return ""
}

// runScript runs script with bash -euo pipefail in dir, in a process
// group of its own that is killed when it runs too long, and returns what
// it printed and its exit code.
func runScript(t *testing.T, dir string, env []string, script string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the script ran longer than %s:\n%s\noutput:\n%s", scriptTimeout, script, out.String())
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("bash: %v", err)
	}
	return out.String(), 0
}

// jsClientModules returns the node_modules directory of the pinned
// official A2A JS client (internal/e2e/interop/js), installing it when it
// is missing. Without node or npm the test is skipped, or fails when
// PACTUM_REQUIRE_INTEROP=1.
func jsClientModules(t *testing.T) string {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv("PACTUM_REQUIRE_INTEROP") == "1" {
			t.Fatalf("%s, and PACTUM_REQUIRE_INTEROP=1", why)
		}
		t.Skipf("%s; set PACTUM_REQUIRE_INTEROP=1 to make this a failure", why)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing(fmt.Sprintf("node is not on PATH (%v)", err))
	}
	js, err := filepath.Abs(filepath.Join("..", "interop", "js"))
	if err != nil {
		t.Fatal(err)
	}
	modules := filepath.Join(js, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@a2a-js", "sdk", "package.json")); err == nil {
		return modules
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing(fmt.Sprintf("the A2A JS client is not installed in %s and npm is not on PATH (%v)", js, err))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = js
	if out, err := cmd.CombinedOutput(); err != nil {
		missing(fmt.Sprintf("npm ci in %s: %v\n%s", js, err, out))
	}
	return modules
}

// lineWith returns the first line of out that starts with prefix.
func lineWith(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
