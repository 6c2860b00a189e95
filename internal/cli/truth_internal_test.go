package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
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
