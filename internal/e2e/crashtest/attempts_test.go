package crashtest

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// attemptLine is one line of testdata/attempt.sh's log.
type attemptLine struct {
	kind    string // start, child or end
	task    string
	attempt int
	pid     int
	at      time.Time
	alive   string // start lines: processes of earlier attempts still running
	raw     string
}

func readAttempts(t *testing.T, file string) []attemptLine {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []attemptLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 {
			t.Fatalf("attempt log: short line %q", sc.Text())
		}
		l := attemptLine{kind: fs[0], task: fs[1], raw: sc.Text()}
		var err1, err2, err3 error
		l.attempt, err1 = strconv.Atoi(fs[2])
		l.pid, err2 = strconv.Atoi(fs[3])
		var secs float64
		secs, err3 = strconv.ParseFloat(fs[5], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("attempt log: bad line %q", sc.Text())
		}
		l.at = time.Unix(0, int64(secs*1e9))
		if l.kind == "start" && len(fs) > 6 {
			l.alive = strings.TrimPrefix(fs[6], "alive=")
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkNoOverlap fails the test if an attempt of a task started while a
// process of an earlier attempt of the same task was running, or if an
// earlier attempt ended after a later one started (the log is in the
// order the lines were written).
func checkNoOverlap(t *testing.T, lines []attemptLine) {
	t.Helper()
	latest := map[string]int{} // task → latest attempt started
	reruns := 0
	for _, l := range lines {
		switch l.kind {
		case "start":
			if l.alive != "" {
				t.Errorf("task %s attempt %d started while processes %s of an earlier attempt ran", l.task, l.attempt, l.alive)
			}
			if prev, ok := latest[l.task]; ok {
				reruns++
				if l.attempt <= prev {
					t.Errorf("task %s: attempt %d started after attempt %d", l.task, l.attempt, prev)
				}
			}
			latest[l.task] = l.attempt
		case "end":
			if cur := latest[l.task]; l.attempt < cur {
				t.Errorf("task %s: attempt %d ended after attempt %d started: %q", l.task, l.attempt, cur, l.raw)
			}
		}
	}
	t.Logf("attempt log: %d lines, %d tasks, %d attempts after a first one", len(lines), len(latest), reruns)
}

// shimReaction bounds how long after the server's death its attempts'
// process groups may still run: on Linux the kernel tells each group's
// shim at once, and the shim (a user-space process) kills its group; under
// load that takes milliseconds (docs/lifecycle.md, "At most one attempt at
// a time").
const shimReaction = 250 * time.Millisecond

// checkQuietBetween fails the test if any attempt wrote to the log between
// the server's death (plus the shims' reaction) and its restart: a process
// that outlived its server. Lines written within the reaction are logged
// with their delay.
func checkQuietBetween(t *testing.T, lines []attemptLine, from, to time.Time) {
	t.Helper()
	for _, l := range lines {
		switch {
		case l.at.After(from.Add(shimReaction)) && l.at.Before(to):
			t.Errorf("an attempt's process worked on after its server was killed: %q", l.raw)
		case l.at.After(from) && l.at.Before(to):
			t.Logf("written %s after the server's death, within the shims' reaction: %q", l.at.Sub(from), l.raw)
		}
	}
}
