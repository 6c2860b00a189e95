package exec_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/internal/procgroup/proctest"
	"github.com/pactum/pactum/task"
)

// burstLines is what burst.sh writes after its pid for n lines.
func burstLines(n int) []string {
	var lines []string
	for i := 1; i < n; i++ {
		lines = append(lines, fmt.Sprintf("line %d\n", i))
	}
	return append(lines, fmt.Sprintf("line %d", n))
}

// TestSlowEmitLosesNoOutput: a subscriber that is slow to take a chunk
// (a busy store, thousands of streams) holds up the reading of standard
// output while the command writes its last lines and exits. Those lines
// wait in the pipe; kill_grace (the bound on what the command leaves
// running with its output open) must not cut them off: every line the
// command wrote reaches the chunks and the result. Before the fix the
// pipe was closed kill_grace after the exit with the lines still in it,
// and the attempt succeeded without them (issue 15's fan-out run: 4 of
// 5 lines stored).
func TestSlowEmitLosesNoOutput(t *testing.T) {
	t.Parallel()
	const n = 5
	b := setup(t, "command: [./burst.sh, '{{.Input}}', '"+strconv.Itoa(n)+"']\ninput: none\nstream: true\nkill_grace: 1ms")
	for round := range 3 {
		flag := filepath.Join(t.TempDir(), "go-on")
		var rec agenttest.Recorder
		emit := func(c task.ArtifactChunk) error {
			if len(rec.Chunks()) == 0 {
				// The pid line: let the script write the rest and exit
				// while this chunk is still being taken, then take a while
				// longer (many times kill_grace): the lines stay unread.
				pid, err := strconv.Atoi(strings.TrimSpace(agenttest.PartsText(c.Artifact.Parts)))
				if err != nil {
					t.Errorf("pid line: %v", err)
				}
				if err := os.WriteFile(flag, nil, 0o600); err != nil {
					t.Error(err)
				}
				if !proctest.WaitStopped(pid, stuck) {
					t.Errorf("burst.sh (pid %d) still runs", pid)
				}
				time.Sleep(200 * time.Millisecond)
			}
			return rec.Emit(c)
		}
		res, err := b.agent.(agent.Streamer).Stream(b.ctx, agenttest.Request(flag), emit)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got := rec.Texts()
		if len(got) < 1 {
			t.Fatalf("round %d: no chunks", round)
		}
		want := append(burstLines(n), "")
		if !reflect.DeepEqual(got[1:], want) {
			t.Fatalf("round %d: chunks after the pid = %q, want %q", round, got[1:], want)
		}
		agenttest.CheckChunks(t, rec.Chunks(), res)
		if text := agenttest.ResultText(t, res); !strings.HasSuffix(text, "\nline 5") {
			t.Fatalf("round %d: result = %q, want it to end with the last line", round, text)
		}
	}
}

// TestQuickExitLosesNoOutput: commands that write a burst of lines (the
// last without a newline) and exit at once, many attempts at the same
// time and a short kill_grace: every attempt's chunks and result hold
// every line, however the reading of the output and the exit interleave.
func TestQuickExitLosesNoOutput(t *testing.T) {
	t.Parallel()
	const n, attempts, parallel = 50, 40, 8
	script := `i=1; while [ "$i" -lt ` + strconv.Itoa(n) + ` ]; do echo "line $i"; i=$((i + 1)); done; printf 'line %s' "$i"`
	b := setup(t, fmt.Sprintf("command: [sh, -c, %q]\ninput: none\nstream: true\nkill_grace: 1ms", script))
	want := append(burstLines(n), "")
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i := range attempts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var rec agenttest.Recorder
			res, err := b.agent.(agent.Streamer).Stream(b.ctx, agenttest.Request(""), rec.Emit)
			if err != nil {
				t.Errorf("attempt %d: %v", i, err)
				return
			}
			// Chunks are lines as the runtime saw them arrive; compare
			// their concatenation.
			if got, w := strings.Join(rec.Texts(), ""), strings.Join(want, ""); got != w {
				t.Errorf("attempt %d: chunks add up to %d bytes, want %d (ends %q)", i, len(got), len(w), got[max(0, len(got)-20):])
				return
			}
			if !reflect.DeepEqual(rec.Texts(), want) {
				t.Errorf("attempt %d: chunks = %q", i, rec.Texts())
			}
			agenttest.CheckChunks(t, rec.Chunks(), res)
		}()
	}
	wg.Wait()
}

// TestEscapedProcessHoldingOutput: a process that left the command's
// group (setsid) keeps standard output open after the command exited.
// The attempt does not wait for it beyond kill_grace, and keeps what the
// command wrote.
func TestEscapedProcessHoldingOutput(t *testing.T) {
	t.Parallel()
	script := `echo one; setsid sleep 60 & echo "$!"; printf two`
	b := setup(t, fmt.Sprintf("command: [sh, -c, %q]\ninput: none\nstream: true\nkill_grace: 1ms", script))
	var rec agenttest.Recorder
	res, err := b.agent.(agent.Streamer).Stream(b.ctx, agenttest.Request(""), rec.Emit)
	texts := rec.Texts()
	if len(texts) > 1 {
		if pid, perr := strconv.Atoi(strings.TrimSpace(texts[1])); perr == nil {
			t.Cleanup(func() { proctest.KillIfRunning(pid) })
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 4 || texts[0] != "one\n" || texts[2] != "two" || texts[3] != "" {
		t.Errorf("chunks = %q, want one, the pid, two and the closing chunk", texts)
	}
	agenttest.CheckChunks(t, rec.Chunks(), res)
}
