package tail_test

import (
	"strings"
	"testing"

	"github.com/pactum/pactum/agent/internal/tail"
)

func TestBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"nothing", 8, nil, ""},
		{"fits", 8, []string{"ab", "cd"}, "abcd"},
		{"exactly full", 4, []string{"ab", "cd"}, "abcd"},
		{"trimmed", 16, []string{"  error: x \n"}, "error: x"},
		{"drops the start", 4, []string{"abc", "def"}, "…cdef"},
		{"one long write", 4, []string{"abcdefgh"}, "…efgh"},
		{"cut at a character boundary", 5, []string{"xxéé"}, "…xéé"},
		{"cut at the start of a character", 3, []string{"aé€"}, "…€"},
		{"cut leaves a partial character", 4, []string{"a€é"}, "…é"},
		{"invalid bytes", 8, []string{"a\xffb"}, "a\uFFFDb"},
		{"only space after a cut", 2, []string{"abc  "}, ""},
		{"zero max keeps nothing", 0, []string{"abc"}, ""},
	}
	for _, tt := range tests {
		b := &tail.Buffer{Max: tt.max}
		for _, w := range tt.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Errorf("%s: Write(%q) = %d, %v", tt.name, w, n, err)
			}
		}
		if got := b.String(); got != tt.want {
			t.Errorf("%s: String() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestBufferKeepsMax(t *testing.T) {
	t.Parallel()
	b := &tail.Buffer{Max: 10}
	for i := range 100 {
		_, _ = b.Write([]byte(strings.Repeat(string(rune('a'+i%26)), i%7)))
	}
	if got := len(strings.TrimPrefix(b.String(), "…")); got > 10 {
		t.Errorf("kept %d bytes, want at most 10", got)
	}
}
