package header

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	reserved := []string{"Content-Type", "Host"}
	for _, tc := range []struct {
		name, value, want string
	}{
		{"Authorization", "Bearer x", ""},
		{"X-Trace_Id.1", "v", ""},
		{"", "v", "not a valid header name"},
		{"Bad Name", "v", "not a valid header name"},
		{"Bad:Name", "v", "not a valid header name"},
		{"content-type", "v", "set by the MCP transport"},
		{"HOST", "v", "set by the MCP transport"},
		{"X-Ok", "a\r\nInjected: 1", "line break or NUL"},
		{"X-Ok", "a\x00", "line break or NUL"},
	} {
		err := Check(tc.name, tc.value, "MCP", reserved)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Check(%q) = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Check(%q, %q) = %v, want %q", tc.name, tc.value, err, tc.want)
		case err != nil && strings.Contains(err.Error(), tc.value) && tc.value != "v":
			t.Errorf("Check(%q) quotes the value: %v", tc.name, err)
		}
	}
}
