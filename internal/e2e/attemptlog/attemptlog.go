// Package attemptlog is the slow exec agent of the crash tests and the log
// it writes: Script is a shell command that logs a "start" line (with the
// processes of the task's earlier attempts still alive), a "child" line
// for the child it runs, and an "end" line, each with the task id, the
// attempt, the process id and the time; Read parses that log and the
// Check functions assert what a crash must not break. It is for tests
// only.
package attemptlog

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

//go:embed attempt.sh
var script []byte

// Script writes the agent's script into a temporary directory of t and
// returns its path. Its arguments: LOG TASK ATTEMPT SECONDS [FILTER...];
// after SECONDS it echoes its standard input, or runs the command FILTER
// on it (the answer of an agent that must say more than its input), then
// logs its end.
func Script(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "attempt.sh")
	if err := os.WriteFile(path, script, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Config returns a node's configuration serving the exec agent "slow": the
// script at script, logging into dir/attempts.log and working seconds per
// attempt. With node set the node has that name and records its process
// groups in dir/runs/NODE (a node sweeps its run_dir when it starts, so
// nodes that share dir need one each); without, in dir/runs.
func Config(addr, storeDSN, node, dir, script, seconds string) string {
	runDir, named := dir+"/runs", ""
	if node != "" {
		runDir, named = runDir+"/"+node, "node: "+node+"\n"
	}
	return fmt.Sprintf(`listen: %[1]s
base_url: http://%[1]s
store: %[2]q
%[3]slease: 2s
workers: 16
log: {level: warn}
agents:
  - name: slow
    type: exec
    timeout: 30s
    retry: {max_attempts: 5, initial_backoff: 100ms, max_backoff: 1s}
    exec:
      command: ["%[4]s", "%[5]s/attempts.log", "{{.TaskID}}", "{{.Attempt}}", "%[6]s"]
      run_dir: %[7]s
`, addr, storeDSN, named, script, dir, seconds, runDir)
}

// Wait waits until the log in file satisfies ok and returns it; it fails
// the test when ctx ends first.
func Wait(t testing.TB, ctx context.Context, file string, ok func([]Line) bool) []Line {
	t.Helper()
	for {
		if _, err := os.Stat(file); err == nil {
			if ls := Read(t, file); ok(ls) {
				return ls
			}
		}
		select {
		case <-ctx.Done():
			b, _ := os.ReadFile(file)
			t.Fatalf("attempts log never got there:\n%s", b)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Line is one line of the script's log.
type Line struct {
	Kind    string // start, child or end
	Task    string
	Attempt int
	Pid     int
	At      time.Time
	Alive   string // start lines: processes of earlier attempts still running
	Raw     string
}

// Read parses the log file.
func Read(t testing.TB, file string) []Line {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Line
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 {
			t.Fatalf("attempt log: short line %q", sc.Text())
		}
		l := Line{Kind: fs[0], Task: fs[1], Raw: sc.Text()}
		var err1, err2, err3 error
		l.Attempt, err1 = strconv.Atoi(fs[2])
		l.Pid, err2 = strconv.Atoi(fs[3])
		var secs float64
		secs, err3 = strconv.ParseFloat(fs[5], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("attempt log: bad line %q", sc.Text())
		}
		l.At = time.Unix(0, int64(secs*1e9))
		if l.Kind == "start" && len(fs) > 6 {
			l.Alive = strings.TrimPrefix(fs[6], "alive=")
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// CheckNoOverlap fails the test if an attempt of a task started while a
// process of an earlier attempt of the same task was running, or if an
// earlier attempt ended after a later one started (the log is in the
// order the lines were written).
func CheckNoOverlap(t testing.TB, lines []Line) {
	t.Helper()
	latest := map[string]int{} // task → latest attempt started
	reruns := 0
	for _, l := range lines {
		switch l.Kind {
		case "start":
			if l.Alive != "" {
				t.Errorf("task %s attempt %d started while processes %s of an earlier attempt ran", l.Task, l.Attempt, l.Alive)
			}
			if prev, ok := latest[l.Task]; ok {
				reruns++
				if l.Attempt <= prev {
					t.Errorf("task %s: attempt %d started after attempt %d", l.Task, l.Attempt, prev)
				}
			}
			latest[l.Task] = l.Attempt
		case "end":
			if cur := latest[l.Task]; l.Attempt < cur {
				t.Errorf("task %s: attempt %d ended after attempt %d started: %q", l.Task, l.Attempt, cur, l.Raw)
			}
		}
	}
	t.Logf("attempt log: %d lines, %d tasks, %d attempts after a first one", len(lines), len(latest), reruns)
}

// ShimReaction bounds how long after the server's death its attempts'
// process groups may still run: on Linux the kernel tells each group's
// shim at once, and the shim (a user-space process) kills its group; under
// load that takes milliseconds (docs/lifecycle.md, "At most one attempt at
// a time").
const ShimReaction = 250 * time.Millisecond

// CheckQuietBetween fails the test if any attempt wrote to the log between
// the server's death (plus the shims' reaction) and its restart: a process
// that outlived its server. Lines written within the reaction are logged
// with their delay.
func CheckQuietBetween(t testing.TB, lines []Line, from, to time.Time) {
	t.Helper()
	for _, l := range lines {
		switch {
		case l.At.After(from.Add(ShimReaction)) && l.At.Before(to):
			t.Errorf("an attempt's process worked on after its server was killed: %q", l.Raw)
		case l.At.After(from) && l.At.Before(to):
			t.Logf("written %s after the server's death, within the shims' reaction: %q", l.At.Sub(from), l.Raw)
		}
	}
}
