package mdblock_test

import (
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/e2e/mdblock"
)

// TestExtract: the block between the markers, and a clear error for each
// way a README edit can break them (the tour's and the Go example's tests
// extract their blocks with it).
func TestExtract(t *testing.T) {
	t.Parallel()
	const begin, end = "<!-- x:begin -->", "<!-- x:end -->"
	tests := []struct {
		name, doc, want, wantErr string
	}{
		{"ok", "x\n" + begin + "\n```sh\necho hi\n```\n" + end + "\n", "echo hi\n", ""},
		{"no begin", "```sh\necho hi\n```\n", "", "no " + begin + " marker"},
		{"no end", begin + "\n```sh\necho hi\n```\n", "", "no " + end + " marker after " + begin},
		{"no block", begin + "\necho hi\n" + end, "", "no ```sh block between the tour's markers"},
		{"other language", begin + "\n```go\npackage main\n```\n" + end, "", "no ```sh block"},
		{"unclosed", begin + "\n```sh\necho hi\n" + end, "", "the tour's ```sh block is not closed"},
		{"two blocks", begin + "\n```sh\na\n```\n```sh\nb\n```\n" + end, "", "text after the tour's block, before " + end},
		{"empty", begin + "\n```sh\n\n```\n" + end, "", "the tour's block is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := mdblock.Extract(tt.doc, begin, end, "sh", "the tour's")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Extract = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
