package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandle(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"input": "hello"}`: "HELLO",
		`plain text`:         "PLAIN TEXT",
		`{"other": 1}`:       `{"OTHER": 1}`,
	} {
		rec := httptest.NewRecorder()
		handle(rec, httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(body)))
		var got struct{ Output string }
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v (%s)", body, err, rec.Body)
		}
		if rec.Code != http.StatusOK || got.Output != want {
			t.Errorf("%s: %d %q, want %q", body, rec.Code, got.Output, want)
		}
	}
}
