package a2aserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2apb/v0/pbjson"

	"github.com/pactum/pactum/a2aserver/internal/wire"
)

// FuzzRESTRoutes feeds arbitrary paths, query strings and bodies to the
// HTTP+JSON route table and the routes' decoding. It must never panic;
// what it refuses is InvalidParams, a parse error (a body that is not
// JSON) or InvalidRequest (a route naming no task or operation); and a
// send body it accepts decodes with a2a-go's decoder of that version.
func FuzzRESTRoutes(f *testing.F) {
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
		{"/tasks/t:cancel", "", `{"metadata":[]}`, false},
		{"/tasks/:subscribe", "", ``, false},
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
		b := wire.REST
		if legacy {
			b = wire.REST03
		}
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			route, vars, err := matchREST(method, path, b)
			if err == nil && route != nil {
				_, err = route(restRequest{vars: vars, query: query, body: body, legacy: legacy})
			}
			if err != nil {
				if !errors.Is(err, a2a.ErrInvalidParams) && !errors.Is(err, a2a.ErrParseError) && !errors.Is(err, a2a.ErrInvalidRequest) {
					t.Fatalf("%s %s: %v is not InvalidParams, a parse error or InvalidRequest", method, path, err)
				}
				continue
			}
			if route == nil || method != http.MethodPost {
				continue
			}
			switch path {
			case "/message:send", "/message:stream":
				if !legacy && json.Unmarshal(body, new(a2a.SendMessageRequest)) != nil {
					t.Fatalf("a body a2a-go cannot decode passed: %q", body)
				}
			case "/v1/message:send", "/v1/message:stream":
				if _, err := pbjson.FromProtoSendMessageRequest(body); legacy && err != nil {
					t.Fatalf("a 0.3 body a2a-go cannot decode passed: %q", body)
				}
			}
		}
	})
}
