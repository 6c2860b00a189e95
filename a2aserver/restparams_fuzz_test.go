package a2aserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2apb/v0/pbjson"
)

// FuzzCheckRESTParams feeds arbitrary query strings and bodies to the
// HTTP+JSON parameter check. It must never panic; what it refuses is an
// InvalidParams error; and a body it passes on a send route decodes with
// the SDK's decoder of that version (or is not JSON, which the SDK answers
// as a parse error).
func FuzzCheckRESTParams(f *testing.F) {
	for _, seed := range []struct {
		path, query, body string
		legacy            bool
	}{
		{"/tasks", "pageSize=ten&statusTimestampAfter=yesterday", "", false},
		{"/tasks", "lastUpdatedAfter=2026-01-02T15:04:05Z&includeArtifacts=true", "", false},
		{"/tasks/abc", "historyLength=-1", "", false},
		{"/v1/tasks", "lastUpdatedAfter=x&pageSize=1", "", true},
		{"/message:send", "", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"blob"}]}}`, false},
		{"/message:stream", "", `{"message":"hi"}`, false},
		{"/tasks/t/pushNotificationConfigs", "", `{"url":5}`, false},
		{"/v1/message:send", "", `{"message":{"messageId":"m","role":"ROLE_USER","content":"x"}}`, true},
		{"/v1/tasks/t/pushNotificationConfigs", "", `{}`, true},
		{"/message:send", "", `{"message":`, false},
	} {
		f.Add(seed.path, seed.query, []byte(seed.body), seed.legacy)
	}
	f.Fuzz(func(t *testing.T, path, rawQuery string, body []byte, legacy bool) {
		query, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		prefix := ""
		if legacy {
			prefix = "/v1"
		}
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			err := checkRESTParams(method, path, prefix, query, body, legacy)
			if err != nil {
				if !errors.Is(err, a2a.ErrInvalidParams) {
					t.Fatalf("%s %s: %v is not InvalidParams", method, path, err)
				}
				continue
			}
			if method != http.MethodPost || !json.Valid(body) {
				continue
			}
			switch path {
			case "/message:send", "/message:stream":
				if !legacy && json.Unmarshal(body, new(a2a.SendMessageRequest)) != nil {
					t.Fatalf("a body the SDK cannot decode passed: %q", body)
				}
			case "/v1/message:send", "/v1/message:stream":
				if _, err := pbjson.FromProtoSendMessageRequest(body); legacy && err != nil {
					t.Fatalf("a 0.3 body the SDK cannot decode passed: %q", body)
				}
			}
		}
	})
}
