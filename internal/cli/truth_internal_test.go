package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pactum/pactum/task"
)

// TestCut: a progress line is cut at a word boundary, never inside a word
// or a character, on one line, and says where to read all of it.
func TestCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short enough", 20, "short enough"},
		{"exactly ten", 11, "exactly ten"},
		{"the quick brown fox jumps", 12, "the quick…"},
		{"the quick brown fox jumps", 16, "the quick brown…"},
		{"a line\nand the next", 30, "a line and the next"},
		{"résumé prêt à être envoyé", 14, "résumé prêt à…"},
		{"résumé prêt à être envoyé", 13, "résumé prêt…"},
		{"checks: schema, regex, length", 16, "checks: schema…"},
		{"averyveryverylongwordwithoutspaces end", 10, "averyvery…"},
	} {
		got, cutShort := cut(tc.in, tc.n)
		if got != tc.want || cutShort != (tc.want != strings.Join(strings.Fields(tc.in), " ")) {
			t.Errorf("cut(%q, %d) = %q, %v; want %q", tc.in, tc.n, got, cutShort, tc.want)
		}
		if utf8.RuneCountInString(got) > tc.n || !utf8.ValidString(got) {
			t.Errorf("cut(%q, %d) = %q: longer than %d characters or not valid UTF-8", tc.in, tc.n, got, tc.n)
		}
	}
	if got := progress("attempt failed because of many reasons", 20, "T1"); got != "attempt failed… (all of it: pactum tasks get T1)" {
		t.Errorf("progress = %q", got)
	}
	if got := progress("short", 20, "T1"); got != "short" {
		t.Errorf("progress of a short text = %q, want it unchanged", got)
	}
}

// TestDisplayDSN: a store is named with its password hidden and a
// relative SQLite path made absolute, as the driver opens it.
func TestDisplayDSN(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"sqlite://pactum.db":                               "sqlite://" + filepath.Join(wd, "pactum.db"),
		"sqlite://data/p.db?busy_timeout=2s":               "sqlite://" + filepath.Join(wd, "data/p.db") + "?busy_timeout=2s",
		"sqlite:///var/lib/p.db":                           "sqlite:///var/lib/p.db",
		"postgres://pactum:s3cret@db.example.com:5432/pac": "postgres://pactum:xxxxx@db.example.com:5432/pac",
		"postgres://db.example.com/pac?password=s3cret":    "postgres://db.example.com/pac?password=xxxxx",
	} {
		got := displayDSN(in)
		if got != want {
			t.Errorf("displayDSN(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("displayDSN(%q) = %q shows the password", in, got)
		}
	}
}

// TestRetryWatchMissed: the retries of the current turn that the record
// holds and the follow did not show (it fell behind and resumed from the
// stored task, past the queued state) are printed from the record, once,
// oldest first; those the follow showed, and those of an earlier turn,
// are not.
func TestRetryWatchMissed(t *testing.T) {
	rec := func(from, to task.State, attempt int, reason string) task.Record {
		return task.Record{From: from, To: to, Attempt: attempt, Reason: reason}
	}
	recs := []task.Record{
		rec(task.StateRequested, task.StateValidated, 0, ""),
		rec(task.StateValidated, task.StateQueued, 0, ""),
		rec(task.StateQueued, task.StateInProgress, 1, ""),
		rec(task.StateInProgress, task.StateQueued, 1, "first try failed"),
		rec(task.StateQueued, task.StateInProgress, 2, ""),
		rec(task.StateInProgress, task.StateInputRequired, 2, "asks"),
		rec(task.StateInputRequired, task.StateQueued, 2, "answered"),
		rec(task.StateQueued, task.StateInProgress, 3, ""),
		rec(task.StateInProgress, task.StateQueued, 3, "violated again"),
		rec(task.StateQueued, task.StateInProgress, 4, ""),
		rec(task.StateInProgress, task.StateQueued, 4, "and again"),
		rec(task.StateQueued, task.StateInProgress, 5, ""),
		rec(task.StateInProgress, task.StateSucceeded, 5, ""),
	}
	var r retryWatch
	got := r.missed(recs, "t1")
	want := []string{"attempt 3: violated again", "attempt 4: and again"}
	if !slices.Equal(got, want) {
		t.Errorf("missed = %q, want %q (the current turn's retries)", got, want)
	}
	if again := r.missed(recs, "t1"); len(again) != 0 {
		t.Errorf("missed twice: %q", again)
	}
	seen := retryWatch{attempt: 3} // the follow showed attempt 3's retry
	if got := seen.missed(recs, "t1"); !slices.Equal(got, want[1:]) {
		t.Errorf("after the follow showed attempt 3: %q, want %q", got, want[1:])
	}
}
