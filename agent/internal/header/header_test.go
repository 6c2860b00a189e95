package header

import (
	"fmt"
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

func TestRedactedNeverShowsValues(t *testing.T) {
	h := Redacted{"Authorization": "Bearer hunter2", "X-A": "v"}
	for _, s := range []string{h.String(), h.GoString(), h.LogValue().String(), fmt.Sprint(h), fmt.Sprintf("%#v", h)} {
		if strings.Contains(s, "hunter2") || !strings.Contains(s, "Authorization") {
			t.Errorf("formatted as %q: want the names without the values", s)
		}
	}
}

func TestExpandAndCheckAll(t *testing.T) {
	lookup := func(name string) (string, bool) { return map[string]string{"TOKEN": "s3cret"}[name], name == "TOKEN" }
	h, err := Expand(map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Price": "$5"}, lookup, "MCP", nil)
	if err != nil || h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Price") != "$5" {
		t.Fatalf("Expand = %v, %v", h, err)
	}
	for name, in := range map[string]map[string]string{
		"unset variable":        {"A": "${NOPE}"},
		"line break after ${…}": {"X-Bad": "${TOKEN}\r\nInjected: yes"},
		"reserved after expand": {"Host": "x"},
		"invalid name":          {"Bad Name": "x"},
	} {
		_, err := Expand(in, lookup, "MCP", []string{"Host"})
		if err == nil || !strings.Contains(err.Error(), "headers.") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: err = %v, want one naming the header, never the value", name, err)
		}
	}
	if err := CheckAll(map[string]string{"A": "ok", "content-type": "x"}, "A2A", []string{"Content-Type"}); err == nil || !strings.HasPrefix(err.Error(), "headers.content-type: set by the A2A transport") {
		t.Errorf("CheckAll = %v", err)
	}
	if err := CheckAll(map[string]string{"A": "ok"}, "A2A", []string{"Content-Type"}); err != nil {
		t.Errorf("CheckAll of good headers = %v", err)
	}
}
