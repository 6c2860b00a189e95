package a2aserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2apb/v0/pbjson"
)

// checkRESTParams returns the InvalidParams error of an HTTP+JSON request
// (method and path sub, below the version's route prefix) whose query
// parameters or JSON body the SDK cannot read, or nil. a2a-go answers such
// a request itself with INVALID_REQUEST (a query parameter) or
// PARSE_ERROR (a body member of the wrong type, an unknown part kind);
// the specification calls both invalid parameters, as JSON-RPC's -32602
// does. A body that is not JSON at all is left to the SDK (PARSE_ERROR).
func checkRESTParams(method, sub, prefix string, query url.Values, body []byte, legacy bool) error {
	path, ok := strings.CutPrefix(sub, prefix)
	if !ok {
		return nil
	}
	switch {
	case method == http.MethodGet && path == "/tasks":
		after := "statusTimestampAfter"
		if legacy {
			after = "lastUpdatedAfter"
		} else if !query.Has(after) {
			after = "lastUpdatedAfter" // the 1.0 client's name, accepted as an alias
		}
		return checkQuery(query, map[string]string{
			"pageSize": "int", "historyLength": "int", "includeArtifacts": "bool", after: "time",
		})
	case method == http.MethodGet && strings.HasPrefix(path, "/tasks/") && !strings.Contains(path[len("/tasks/"):], "/") &&
		!strings.HasSuffix(path, ":subscribe"):
		return checkQuery(query, map[string]string{"historyLength": "int"})
	case method != http.MethodPost || !json.Valid(body):
		return nil
	case path == "/message:send" || path == "/message:stream":
		if legacy {
			_, err := pbjson.FromProtoSendMessageRequest(body)
			return bodyError(reflect.TypeFor[pbjson.SendMessageRequest](), body, err)
		}
		return bodyError(reflect.TypeFor[a2a.SendMessageRequest](), body, json.Unmarshal(body, new(a2a.SendMessageRequest)))
	case strings.HasPrefix(path, "/tasks/") && strings.HasSuffix(path, "/pushNotificationConfigs"):
		if legacy {
			_, err := pbjson.FromProtoCreatePushConfigRequest(body, "")
			return bodyError(reflect.TypeFor[pbjson.CreateTaskPushNotificationConfigRequest](), body, err)
		}
		return bodyError(reflect.TypeFor[a2a.PushConfig](), body, json.Unmarshal(body, new(a2a.PushConfig)))
	}
	return nil
}

// checkQuery checks the query parameters named in kinds ("int", "bool" or
// "time", as a2a-go parses them: the first value counts, empty is absent).
func checkQuery(query url.Values, kinds map[string]string) error {
	for _, name := range []string{"pageSize", "historyLength", "includeArtifacts", "statusTimestampAfter", "lastUpdatedAfter"} {
		kind, ok := kinds[name]
		v := query.Get(name)
		if !ok || v == "" {
			continue
		}
		var err error
		var want string
		switch kind {
		case "int":
			_, err = strconv.Atoi(v)
			want = "an integer"
		case "bool":
			_, err = strconv.ParseBool(v)
			want = "true or false"
		case "time":
			_, err = time.Parse(time.RFC3339, v)
			want = "an RFC 3339 time such as 2026-01-02T15:04:05Z"
		}
		if err != nil {
			return invalidParams(fmt.Sprintf("invalid params: query parameter %s: got %.40q, want %s", name, v, want))
		}
	}
	return nil
}

// bodyError returns the InvalidParams error of a JSON body that did not
// decode (err from the SDK's decoder), naming the member found by
// decoding it again member by member into t; nil when err is nil.
func bodyError(t reflect.Type, body []byte, err error) error {
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if path, perr := locateDecodeError(t, body, "body"); path != "" {
		msg = fmt.Sprintf("%s: %v", path, perr)
	}
	return invalidParams("invalid params: " + msg)
}
