package a2aserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2apb/v0/pbjson"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/pactum/pactum/a2aserver/internal/wire"
)

// The oracle: every A2A operation on every binding, with every outcome a
// RequestHandler can have (a result, each A2A error in several shapes, a
// plain error, a panic; for streams, errors before and after events), is
// served from one stub handler twice — through a2a-go's own transports
// (a2asrv.NewJSONRPCHandler, a2asrv.NewRESTHandler, a2av0.NewJSONRPCHandler,
// a2av0.NewRESTHandler) and through the dispatcher — and the answers are
// compared: status, headers, body bytes (SSE event ids and the ErrorInfo
// timestamp masked), and the requests the stub received. Where pactum
// answers differently on purpose, oracleExpectedDifferences says so, checks
// pactum's answer, and the rest is still compared.
//
// a2a-go's transports are given a panic handler (the same error the
// dispatcher's recovered makes) so that panics can be compared where a2a-go
// recovers them; keep-alives are off on both sides.

// TestOracleDispatchMatchesA2AGo is the oracle.
func TestOracleDispatchMatchesA2AGo(t *testing.T) {
	t.Parallel()
	cases := oracleCases()
	compared := map[oracleTriple]bool{}
	hits := make([]int, len(oracleExpectedDifferences))
	for _, c := range cases {
		want := c.serveA2AGo(c.outcome, c.body)
		got := c.servePactum()
		if err := c.reachedTheHandler(want); err != nil {
			t.Errorf("%s: a2a-go: %v", c.name, err)
		}
		for _, d := range oracleCompare(c, want, got) {
			t.Errorf("%s: %s", c.name, d)
		}
		if err := oracleCheckEventIDs(got.body); err != nil {
			t.Errorf("%s: pactum: %v", c.name, err)
		}
		for i, e := range oracleExpectedDifferences {
			if e.match.MatchString(c.name) {
				hits[i]++
			}
		}
		compared[oracleTriple{c.op, c.binding, c.outcome.name}] = true
	}

	// Every row of the table is hit: a row that no case reaches is stale.
	for i, e := range oracleExpectedDifferences {
		if hits[i] == 0 {
			t.Errorf("expected difference %q matches no case", e.match)
		}
		t.Logf("expected difference (%d cases) %s: %s", hits[i], e.match, e.pactum)
	}

	// Coverage: every operation on every binding (but 0.3 JSON-RPC
	// ListTasks, which 0.3 does not have) with its result and every A2A
	// error, before and after events for streams.
	missing := 0
	for _, op := range oracleOps {
		for _, b := range oracleBindings {
			if b == wire.JSONRPC03 && op.name == "ListTasks" {
				if !compared[oracleTriple{op.name, b, "unknown-method"}] {
					t.Errorf("0.3 JSON-RPC ListTasks (method not found) was not compared")
				}
				continue
			}
			var want []string
			if op.stream {
				want = append(want, "events", "first:internal", "after:internal", "first:panic", "after:panic")
			} else {
				want = append(want, "result", "err:internal", "err:panic")
			}
			for _, s := range wire.Sentinels() {
				for _, shape := range []string{"", "+meta", "+details", "+wrapped"} {
					name := a2a.ErrorReason(s) + shape
					if op.stream {
						want = append(want, "first:"+name, "after:"+name)
					} else {
						want = append(want, "err:"+name)
					}
				}
			}
			for _, o := range want {
				if !compared[oracleTriple{op.name, b, o}] {
					missing++
					if missing <= 20 {
						t.Errorf("not compared: %s on %s with %s", op.name, oracleBindingName[b], o)
					}
				}
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d (operation, binding, outcome) triples were not compared", missing)
	}
	t.Logf("%d (operation, binding, outcome) triples compared in %d cases", len(compared), len(cases))
}

// TestOracleIDsEchoedAsSent: pactum echoes a JSON-RPC id as sent, in
// results, errors and stream events; a2a-go decodes it (a number into a
// float64, a string re-escaped), a deliberate difference. Everything but
// the id is the same.
func TestOracleIDsEchoedAsSent(t *testing.T) {
	t.Parallel()
	for _, id := range []struct{ sent, a2ago string }{
		{`123456789012345678901234567890`, `1.2345678901234568e+29`},
		{`"r&1"`, `"r\u00261"`},
	} {
		for _, name := range []string{
			"jsonrpc/GetTask/result", "jsonrpc/GetTask/err:TASK_NOT_FOUND", "jsonrpc/SubscribeToTask/events",
			"jsonrpc/SendStreamingMessage/after:TASK_NOT_FOUND",
			"jsonrpc03/GetTask/result", "jsonrpc03/GetTask/err:TASK_NOT_FOUND", "jsonrpc03/SubscribeToTask/events",
			"jsonrpc03/SendStreamingMessage/after:TASK_NOT_FOUND",
		} {
			c := oracleCaseNamed(t, name).withID(id.sent)
			want := c.serveA2AGo(c.outcome, c.body)
			got := c.servePactum()
			pactumID, a2agoID := []byte(`"id":`+id.sent), []byte(`"id":`+id.a2ago)
			n := bytes.Count(got.body, pactumID)
			if n == 0 || n != bytes.Count(want.body, a2agoID) {
				t.Errorf("%s id %s: pactum echoes it %d times, a2a-go writes %s %d times:\npactum: %s\na2a-go: %s",
					name, id.sent, n, id.a2ago, bytes.Count(want.body, a2agoID), got.body, want.body)
				continue
			}
			got.body = bytes.ReplaceAll(got.body, pactumID, []byte(`"id":ID`))
			want.body = bytes.ReplaceAll(want.body, a2agoID, []byte(`"id":ID`))
			for _, d := range oracleCompare(c, want, got) {
				t.Errorf("%s id %s: %s", name, id.sent, d)
			}
		}
	}
}

// TestOracleCatchesMutations: the comparison reports a pactum answer that
// is wrong in one small way, also where an expected difference applies.
func TestOracleCatchesMutations(t *testing.T) {
	t.Parallel()
	idRE := regexp.MustCompile(`"id":("r-1"|7)`)
	for _, m := range []struct {
		name   string
		c      string
		mutate func(a *oracleAnswer)
	}{
		{"id replaced", "jsonrpc/GetTask/result", func(a *oracleAnswer) {
			a.body = idRE.ReplaceAll(a.body, []byte(`"id":"r-2"`))
		}},
		{"id replaced in one event", "jsonrpc/SendStreamingMessage/events", func(a *oracleAnswer) {
			i := idRE.FindIndex(a.body)
			a.body = slices.Concat(a.body[:i[0]], []byte(`"id":8`), a.body[i[1]:])
		}},
		{"data: without the space", "jsonrpc/SendStreamingMessage/events", func(a *oracleAnswer) {
			a.body = bytes.Replace(a.body, []byte("data: "), []byte("data:"), 1)
		}},
		{"id and data swapped", "rest/SubscribeToTask(GET)/events", func(a *oracleAnswer) {
			lines := strings.SplitN(string(a.body), "\n", 3)
			a.body = []byte(lines[1] + "\n" + lines[0] + "\n" + lines[2])
		}},
		{"one event fewer", "rest03/SendStreamingMessage/events", func(a *oracleAnswer) {
			i := bytes.LastIndex(a.body[:len(a.body)-2], []byte("\n\nid: "))
			a.body = a.body[:i+2]
		}},
		{"events not separated by a blank line", "jsonrpc03/SubscribeToTask/events", func(a *oracleAnswer) {
			a.body = bytes.Replace(a.body, []byte("\n\nid: "), []byte("\nid: "), 1)
		}},
		{"status of TaskNotCancelable", "rest/CancelTask/err:TASK_NOT_CANCELABLE", func(a *oracleAnswer) {
			a.status = http.StatusConflict
		}},
		{"status of TaskNotCancelable, 0.3", "rest03/CancelTask/err:TASK_NOT_CANCELABLE", func(a *oracleAnswer) {
			a.status = http.StatusConflict
		}},
		{"JSON-RPC code", "jsonrpc/GetTask/err:TASK_NOT_FOUND", func(a *oracleAnswer) {
			a.body = bytes.Replace(a.body, []byte(`-32001`), []byte(`-32603`), 1)
		}},
		{"ErrorInfo timestamp dropped", "rest/GetTask/err:TASK_NOT_FOUND", func(a *oracleAnswer) {
			a.body = regexp.MustCompile(`,"timestamp":"[^"]*"`).ReplaceAll(a.body, nil)
		}},
		{"ErrorInfo metadata lost", "jsonrpc/GetTask/err:TASK_NOT_FOUND+meta", func(a *oracleAnswer) {
			a.body = bytes.Replace(a.body, []byte(`"k":"v",`), nil, 1)
		}},
		{"trailing newline dropped", "rest/GetTask/result", func(a *oracleAnswer) {
			a.body = bytes.TrimSuffix(a.body, []byte("\n"))
		}},
		{"Content-Type", "rest03/GetTask/err:TASK_NOT_FOUND", func(a *oracleAnswer) {
			a.header.Set("Content-Type", "application/json")
		}},
		{"SSE header", "rest/SendStreamingMessage/events", func(a *oracleAnswer) {
			a.header.Del("X-Accel-Buffering")
		}},
		{"the handler got another request", "rest/ListTasks/result", func(a *oracleAnswer) {
			a.calls[0] = strings.Replace(a.calls[0], `"pageSize":5`, `"pageSize":6`, 1)
		}},
		// Where an expected difference applies, it does not hide others.
		{"0.3 JSON-RPC error (Content-Type row) with its id replaced", "jsonrpc03/GetTask/err:TASK_NOT_FOUND", func(a *oracleAnswer) {
			a.body = idRE.ReplaceAll(a.body, []byte(`"id":"r-2"`))
		}},
		{"0.3 JSON-RPC error without Content-Type", "jsonrpc03/GetTask/err:TASK_NOT_FOUND", func(a *oracleAnswer) {
			a.header.Del("Content-Type")
		}},
		{"refused stream (HTTP error row) with status 200", "rest/SendStreamingMessage/first:TASK_NOT_FOUND", func(a *oracleAnswer) {
			a.status = http.StatusOK
		}},
		{"refused stream (HTTP error row) with another message", "rest03/SubscribeToTask(POST)/first:TASK_NOT_FOUND+meta", func(a *oracleAnswer) {
			a.body = bytes.Replace(a.body, []byte(`msg`), []byte(`mgs`), 1)
		}},
		{"panic (recovered row) answered 400", "rest/GetTask/err:panic", func(a *oracleAnswer) {
			a.status = http.StatusBadRequest
		}},
		{"bad params (InvalidParams row) with another id", "jsonrpc/SendMessage/badparams", func(a *oracleAnswer) {
			a.body = idRE.ReplaceAll(a.body, []byte(`"id":"r-2"`))
		}},
	} {
		c := oracleCaseNamed(t, m.c)
		want := c.serveA2AGo(c.outcome, c.body)
		got := c.servePactum()
		if d := oracleCompare(c, want, got); len(d) > 0 {
			t.Fatalf("%s: differs before the mutation: %v", m.c, d)
		}
		got.header = got.header.Clone()
		got.calls = slices.Clone(got.calls)
		m.mutate(&got)
		if d := oracleCompare(c, want, got); len(d) == 0 {
			t.Errorf("%s (%s): the oracle does not see the mutation", m.name, m.c)
		}
	}
}

// ----- expected differences -----

// oracleExpected is a deliberate difference: the cases it applies to (a
// regexp on case names, "binding/operation/outcome"), what pactum answers
// instead and why, and check, which fails unless pactum answers so and
// makes the two answers comparable for the rest (in place).
type oracleExpected struct {
	match  *regexp.Regexp
	pactum string
	check  func(c *oracleCase, want, got *oracleAnswer) error
}

// oracleExpectedDifferences are applied in order: where two apply, the
// second sees the answers as the first left them.
var oracleExpectedDifferences = []oracleExpected{
	{
		regexp.MustCompile(`^jsonrpc03/[^/]+/(err:.*|unknown-method|badparams)$`),
		"Content-Type application/json on a JSON-RPC error answer; a2a-go's 0.3 transport sets none (net/http then sniffs text/plain)",
		func(c *oracleCase, want, got *oracleAnswer) error {
			if ct := got.header.Get("Content-Type"); ct != "application/json" {
				return fmt.Errorf("pactum's Content-Type is %q, want application/json", ct)
			}
			if ct := want.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				return fmt.Errorf("a2a-go's Content-Type is %q (sniffed text/plain expected)", ct)
			}
			want.header.Set("Content-Type", "application/json")
			return nil
		},
	},
	{
		regexp.MustCompile(`^rest(03)?/(SendStreamingMessage|SubscribeToTask\((GET|POST)\))/first:`),
		"an HTTP error (the error's status, application/json — 0.3: application/problem+json — and the error as body) for an HTTP+JSON stream that fails before its first event; a2a-go answers 200 text/event-stream with the error as the one event, which the official clients cannot read as an error",
		func(c *oracleCase, want, got *oracleAnswer) error {
			if want.status != http.StatusOK || want.header.Get("Content-Type") != "text/event-stream" {
				return fmt.Errorf("a2a-go answered %d %s, not an event stream", want.status, want.header.Get("Content-Type"))
			}
			events := oracleEvents(want.body)
			if len(events) != 1 {
				return fmt.Errorf("a2a-go's stream has %d events, want the error alone", len(events))
			}
			var e struct {
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal(events[0], &e); err != nil || e.Error.Code == 0 {
				return fmt.Errorf("a2a-go's event is no error: %s", events[0])
			}
			ct := "application/json"
			if c.binding == wire.REST03 {
				ct = "application/problem+json"
			}
			if got.status != e.Error.Code || got.header.Get("Content-Type") != ct || len(got.header) != 1 {
				return fmt.Errorf("pactum answered %d %v, want %d with Content-Type %s alone", got.status, got.header, e.Error.Code, ct)
			}
			want.status, want.header = got.status, got.header
			want.body = append(events[0], '\n')
			return nil
		},
	},
	{
		// It follows from the row above: an HTTP error on a task route
		// names the task, as a2a-go's own GetTask and CancelTask errors
		// do; a2a-go's stream error events never carry it.
		regexp.MustCompile(`^rest(03)?/SubscribeToTask\((GET|POST)\)/first:`),
		"the refused subscribe's HTTP error names the task (taskId in the ErrorInfo metadata); a2a-go's error event does not",
		func(c *oracleCase, want, got *oracleAnswer) error {
			taskID := []byte(`"taskId":"t1",`)
			if bytes.Count(got.body, taskID) != 1 || bytes.Contains(want.body, taskID) {
				return fmt.Errorf("want taskId in pactum's error alone:\npactum: %s\na2a-go: %s", got.body, want.body)
			}
			got.body = bytes.Replace(got.body, taskID, nil, 1)
			return nil
		},
	},
	{
		regexp.MustCompile(`^rest(03)?/[^/]+/err:panic$`),
		"a panic in an HTTP+JSON unary operation is answered as the error recovered makes of it (500 INTERNAL, the answer a2a-go gives when the handler returns that error); a2a-go's HTTP+JSON transports recover panics in streams only, and net/http drops the connection",
		func(c *oracleCase, want, got *oracleAnswer) error {
			if want.panicked == nil {
				return fmt.Errorf("a2a-go did not panic: %d %s", want.status, want.body)
			}
			*want = c.serveA2AGo(oracleOutcome{name: "err:recovered", err: oraclePanicError}, c.body)
			if want.panicked != nil {
				return fmt.Errorf("a2a-go panicked on an error: %v", want.panicked)
			}
			// The handler was called (and panicked) on both sides.
			want.calls = got.calls
			return nil
		},
	},
	{
		regexp.MustCompile(`/badparams$`),
		"InvalidParams naming the member that does not decode (params.message, body.message); a2a-go: InvalidParams with Go's decoding message on JSON-RPC, ParseError (\"parse error\") on HTTP+JSON",
		func(c *oracleCase, want, got *oracleAnswer) error {
			return oracleSameButError(c, want, got, "message")
		},
	},
	{
		regexp.MustCompile(`^rest(03)?/GetTask\[badquery\]/`),
		"InvalidParams naming the query parameter that does not parse (historyLength); a2a-go: InvalidRequest (\"invalid request\")",
		func(c *oracleCase, want, got *oracleAnswer) error {
			return oracleSameButError(c, want, got, "historyLength")
		},
	},
	{
		regexp.MustCompile(`^jsonrpc03/ListTasks/unknown-method$`),
		"MethodNotFound whose message names the method and the binding (method \"tasks/list\" is not an A2A 0.3 JSON-RPC method); a2a-go: \"method not found\"",
		func(c *oracleCase, want, got *oracleAnswer) error {
			const pactumMsg, a2agoMsg = `"message":"method \"tasks/list\" is not an A2A 0.3 JSON-RPC method"`, `"message":"method not found"`
			if !bytes.Contains(got.body, []byte(pactumMsg)) || !bytes.Contains(want.body, []byte(a2agoMsg)) {
				return fmt.Errorf("messages:\npactum: %s\na2a-go: %s", got.body, want.body)
			}
			got.body = bytes.Replace(got.body, []byte(pactumMsg), []byte(a2agoMsg), 1)
			return nil
		},
	},
	{
		// JSON-RPC 2.0 §4.1 (and TestNotificationsRun).
		regexp.MustCompile(`/notification$`),
		"a request without an id (a notification) runs and is answered 204 No Content with no body, as JSON-RPC 2.0 says; a2a-go answers 200 with the result and \"id\":null",
		func(c *oracleCase, want, got *oracleAnswer) error {
			if got.status != http.StatusNoContent || len(got.body) != 0 || len(got.header) != 0 {
				return fmt.Errorf("pactum answered %d %v %s, want 204 with nothing", got.status, got.header, got.body)
			}
			if want.status != http.StatusOK || !bytes.HasPrefix(want.body, []byte(`{"jsonrpc":"2.0","id":null,"result":`)) {
				return fmt.Errorf("a2a-go answered %d %s", want.status, want.body)
			}
			// The stub's calls (the notification ran) are still compared.
			want.status, want.header, want.body = got.status, got.header, got.body
			return nil
		},
	},
	{
		// JSON-RPC 2.0 §4.2 lets a request omit params.
		regexp.MustCompile(`/noparams$`),
		"a request without params is served as with \"params\":{} (the answer a2a-go gives to that); a2a-go: ParseError (-32700, \"parse error: unexpected end of JSON input\") without calling the handler",
		func(c *oracleCase, want, got *oracleAnswer) error {
			if !bytes.Contains(want.body, []byte(`"code":-32700`)) || len(want.calls) != 0 {
				return fmt.Errorf("a2a-go did not refuse it: %s", want.body)
			}
			*want = c.serveA2AGo(c.outcome, oracleEnvelope(c.id, c.rpcMethod, "{}"))
			return nil
		},
	},
	{
		regexp.MustCompile(`^rest/CancelTask\[body\]/`),
		"the metadata in a CancelTask body reaches the handler (CancelTaskRequest.Metadata, as on JSON-RPC); a2a-go's HTTP+JSON transport ignores the body",
		func(c *oracleCase, want, got *oracleAnswer) error {
			meta := `,"metadata":{"reason":"\u003cb\u003e\u0026"}`
			if len(got.calls) != 1 || !strings.Contains(got.calls[0], meta) {
				return fmt.Errorf("pactum's handler got %q, want the metadata", got.calls)
			}
			got.calls = []string{strings.Replace(got.calls[0], meta, "", 1)}
			return nil
		},
	},
}

// oracleSameButError checks that pactum answered InvalidParams naming
// member and makes the error members of the two answers alike (the rest —
// status, headers, the JSON-RPC envelope, the calls — is compared).
func oracleSameButError(c *oracleCase, want, got *oracleAnswer, member string) error {
	if c.binding.RPC() {
		var r struct {
			Error struct {
				Code    int
				Message string
			}
		}
		if json.Unmarshal(got.body, &r) != nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, member) {
			return fmt.Errorf("pactum's answer is not InvalidParams naming %s: %s", member, got.body)
		}
		errRE := regexp.MustCompile(`"error":\{.*\}\}\n$`)
		want.body = errRE.ReplaceAll(want.body, []byte(`"error":{}}`+"\n"))
		got.body = errRE.ReplaceAll(got.body, []byte(`"error":{}}`+"\n"))
		return nil
	}
	var r struct {
		Error struct {
			Code    int
			Status  string
			Message string
		}
	}
	if json.Unmarshal(got.body, &r) != nil || r.Error.Code != http.StatusBadRequest || r.Error.Status != "INVALID_ARGUMENT" ||
		!strings.Contains(r.Error.Message, member) || !bytes.Contains(got.body, []byte(`"reason":"INVALID_PARAMS"`)) {
		return fmt.Errorf("pactum's answer is not InvalidParams naming %s: %s", member, got.body)
	}
	want.body, got.body = nil, nil
	return nil
}

// ----- comparison -----

// oracleAnswer is what one side answered to a case.
type oracleAnswer struct {
	status int
	header http.Header
	body   []byte
	// panicked is what escaped the handler (a2a-go does not recover
	// everywhere).
	panicked any
	// calls are the RequestHandler calls the stub received.
	calls []string
}

var (
	oracleSSEID     = regexp.MustCompile(`(?m)^id: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	oracleMetadata  = regexp.MustCompile(`"metadata":\{[^{}]*\}`)
	oracleTimestamp = regexp.MustCompile(`"timestamp":"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z"`)
)

// oracleMask replaces what differs from one answer to the next: SSE event
// ids (UUIDs) and the time in an ErrorInfo's metadata (RFC 3339 seconds).
func oracleMask(b []byte) []byte {
	b = oracleSSEID.ReplaceAll(b, []byte("id: <uuid>"))
	return oracleMetadata.ReplaceAllFunc(b, func(m []byte) []byte {
		return oracleTimestamp.ReplaceAll(m, []byte(`"timestamp":"<now>"`))
	})
}

// oracleCompare returns the differences between a2a-go's answer (want) and
// pactum's (got) to c, after the expected differences that apply to c.
func oracleCompare(c *oracleCase, want, got oracleAnswer) []string {
	want.header, got.header = want.header.Clone(), got.header.Clone()
	var diffs []string
	for _, e := range oracleExpectedDifferences {
		if e.match.MatchString(c.name) {
			if err := e.check(c, &want, &got); err != nil {
				diffs = append(diffs, fmt.Sprintf("expected difference %s: %v", e.match, err))
			}
		}
	}
	return append(diffs, oracleDiff(&want, &got)...)
}

// oracleDiff returns the differences between two answers.
func oracleDiff(want, got *oracleAnswer) []string {
	var diffs []string
	if want.panicked != nil || got.panicked != nil {
		diffs = append(diffs, fmt.Sprintf("panicked: a2a-go %v, pactum %v", want.panicked, got.panicked))
	}
	if want.status != got.status {
		diffs = append(diffs, fmt.Sprintf("status: a2a-go %d, pactum %d", want.status, got.status))
	}
	if w, g := oracleHeaderLines(want.header), oracleHeaderLines(got.header); !slices.Equal(w, g) {
		diffs = append(diffs, fmt.Sprintf("headers:\na2a-go %q\npactum %q", w, g))
	}
	if w, g := oracleMask(want.body), oracleMask(got.body); !bytes.Equal(w, g) {
		i := 0
		for i < len(w) && i < len(g) && w[i] == g[i] {
			i++
		}
		from := max(0, i-80)
		diffs = append(diffs, fmt.Sprintf("body differs at byte %d:\na2a-go …%q\npactum …%q\n(a2a-go %q)\n(pactum %q)",
			i, w[from:min(len(w), i+120)], g[from:min(len(g), i+120)], want.body, got.body))
	}
	if !slices.Equal(want.calls, got.calls) {
		diffs = append(diffs, fmt.Sprintf("handler calls:\na2a-go %q\npactum %q", want.calls, got.calls))
	}
	return diffs
}

func oracleHeaderLines(h http.Header) []string {
	var lines []string
	for k, v := range h {
		lines = append(lines, k+": "+strings.Join(v, ", "))
	}
	slices.Sort(lines)
	return lines
}

// oracleEvents returns the data of each event of an SSE body.
func oracleEvents(body []byte) [][]byte {
	var out [][]byte
	for _, ev := range bytes.Split(body, []byte("\n\n")) {
		for _, line := range bytes.Split(ev, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

// oracleCheckEventIDs fails unless the SSE event ids in body are distinct.
func oracleCheckEventIDs(body []byte) error {
	ids := oracleSSEID.FindAll(body, -1)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[string(id)] {
			return fmt.Errorf("event %s twice", id)
		}
		seen[string(id)] = true
	}
	return nil
}

// ----- cases -----

// oracleTriple is one (operation, binding, outcome) compared.
type oracleTriple struct {
	op      string
	binding wire.Binding
	outcome string
}

var oracleBindings = []wire.Binding{wire.JSONRPC, wire.JSONRPC03, wire.REST, wire.REST03}

var oracleBindingName = map[wire.Binding]string{
	wire.JSONRPC: "jsonrpc", wire.JSONRPC03: "jsonrpc03", wire.REST: "rest", wire.REST03: "rest03",
}

// oracleOps are the RequestHandler's 11 operations.
var oracleOps = []struct {
	name   string
	stream bool
}{
	{"SendMessage", false}, {"SendStreamingMessage", true}, {"GetTask", false}, {"ListTasks", false},
	{"CancelTask", false}, {"SubscribeToTask", true}, {"GetTaskPushConfig", false},
	{"CreateTaskPushConfig", false}, {"ListTaskPushConfigs", false}, {"DeleteTaskPushConfig", false},
	{"GetExtendedAgentCard", false},
}

// oracleCase is one request served both ways.
type oracleCase struct {
	name    string
	op      string
	binding wire.Binding
	outcome oracleOutcome
	// method and target are the HTTP request's (target below the
	// agent's mount, with the query); body its body.
	method, target string
	body           []byte
	// JSON-RPC: the method, params ("" for none) and id ("" for none)
	// body was built from.
	rpcMethod, params, id string
}

// reachedTheHandler fails unless a2a-go's answer a to c came from the
// operation (not from a request that went astray, which pactum could
// refuse alike): the handler was called once, and a result is a success.
func (c *oracleCase) reachedTheHandler(a oracleAnswer) error {
	calls := 1
	if c.outcome.name == "unknown-method" || c.outcome.name == "badparams" || c.outcome.name == "noparams" ||
		strings.Contains(c.name, "[badquery]") {
		calls = 0
	}
	if len(a.calls) != calls {
		return fmt.Errorf("the handler was called %d times, want %d: %d %s", len(a.calls), calls, a.status, a.body)
	}
	result := strings.HasPrefix(c.outcome.name, "result") || strings.HasPrefix(c.outcome.name, "events")
	if result && !strings.Contains(c.name, "[badquery]") {
		if a.status != http.StatusOK && a.status != http.StatusNoContent {
			return fmt.Errorf("a result answered %d: %s", a.status, a.body)
		}
		if c.binding.RPC() && !bytes.Contains(a.body, []byte(`"result":`)) && c.op != "DeleteTaskPushConfig" {
			return fmt.Errorf("a result answered without one: %s", a.body)
		}
	}
	return nil
}

// withID returns c with another JSON-RPC id.
func (c *oracleCase) withID(id string) *oracleCase {
	d := *c
	d.id = id
	d.body = oracleEnvelope(id, d.rpcMethod, d.params)
	return &d
}

// oracleRoute is how a binding asks for an operation.
type oracleRoute struct {
	variant        string // "(GET)", "[body]": for operations with several routes
	method, target string
	body           []byte
	rpcMethod      string
	params         string
}

// oracleRoutes returns the requests of op on b.
func oracleRoutes(op string, b wire.Binding) []oracleRoute {
	rpc := func(method string, params any) []oracleRoute {
		return []oracleRoute{{method: http.MethodPost, target: "/", rpcMethod: method, params: string(oracleJSON(params))}}
	}
	rest := func(method, target string, body []byte) []oracleRoute {
		if b == wire.REST03 {
			target = "/v1" + target
		}
		return []oracleRoute{{method: method, target: target, body: body}}
	}
	send := oracleSendRequest()
	pc := oraclePushConfig("c1")
	switch b {
	case wire.JSONRPC:
		switch op {
		case "SendMessage", "SendStreamingMessage":
			return rpc(op, send)
		case "GetTask":
			return rpc(op, &a2a.GetTaskRequest{ID: "t1", HistoryLength: oraclePtr(2)})
		case "ListTasks":
			return rpc(op, oracleListRequest())
		case "CancelTask":
			return rpc(op, &a2a.CancelTaskRequest{ID: "t1", Metadata: map[string]any{"reason": "<b>&"}})
		case "SubscribeToTask":
			return rpc(op, &a2a.SubscribeToTaskRequest{ID: "t1"})
		case "GetTaskPushConfig":
			return rpc("GetTaskPushNotificationConfig", &a2a.GetTaskPushConfigRequest{TaskID: "t1", ID: "c1"})
		case "CreateTaskPushConfig":
			return rpc("CreateTaskPushNotificationConfig", pc)
		case "ListTaskPushConfigs":
			return rpc("ListTaskPushNotificationConfigs", &a2a.ListTaskPushConfigRequest{TaskID: "t1"})
		case "DeleteTaskPushConfig":
			return rpc("DeleteTaskPushNotificationConfig", &a2a.DeleteTaskPushConfigRequest{TaskID: "t1", ID: "c1"})
		case "GetExtendedAgentCard":
			return rpc(op, &a2a.GetExtendedAgentCardRequest{})
		}
	case wire.JSONRPC03:
		switch op {
		case "SendMessage":
			return rpc("message/send", a2av0.FromV1SendMessageRequest(send))
		case "SendStreamingMessage":
			return rpc("message/stream", a2av0.FromV1SendMessageRequest(send))
		case "GetTask":
			return rpc("tasks/get", a2av0.FromV1GetTaskRequest(&a2a.GetTaskRequest{ID: "t1", HistoryLength: oraclePtr(2)}))
		case "ListTasks": // not a 0.3 JSON-RPC method
			return rpc("tasks/list", a2av0.FromV1ListTasksRequest(oracleListRequest()))
		case "CancelTask":
			return rpc("tasks/cancel", a2av0.FromV1CancelTaskRequest(&a2a.CancelTaskRequest{ID: "t1", Metadata: map[string]any{"reason": "<b>&"}}))
		case "SubscribeToTask":
			return rpc("tasks/resubscribe", a2av0.FromV1SubscribeToTaskRequest(&a2a.SubscribeToTaskRequest{ID: "t1"}))
		case "GetTaskPushConfig":
			return rpc("tasks/pushNotificationConfig/get", a2av0.FromV1GetTaskPushConfigRequest(&a2a.GetTaskPushConfigRequest{TaskID: "t1", ID: "c1"}))
		case "CreateTaskPushConfig":
			return rpc("tasks/pushNotificationConfig/set", a2av0.FromV1PushConfig(pc))
		case "ListTaskPushConfigs":
			return rpc("tasks/pushNotificationConfig/list", a2av0.FromV1ListTaskPushConfigRequest(&a2a.ListTaskPushConfigRequest{TaskID: "t1"}))
		case "DeleteTaskPushConfig":
			return rpc("tasks/pushNotificationConfig/delete", a2av0.FromV1DeleteTaskPushConfigRequest(&a2a.DeleteTaskPushConfigRequest{TaskID: "t1", ID: "c1"}))
		case "GetExtendedAgentCard":
			return []oracleRoute{{method: http.MethodPost, target: "/", rpcMethod: "agent/getAuthenticatedExtendedCard"}}
		}
	case wire.REST, wire.REST03:
		switch op {
		case "SendMessage", "SendStreamingMessage":
			body := oracleJSON(send)
			if b == wire.REST03 {
				body, _ = pbjson.ToProtoSendMessageRequest(send)
			}
			path := "/message:send"
			if op == "SendStreamingMessage" {
				path = "/message:stream"
			}
			return rest(http.MethodPost, path, body)
		case "GetTask":
			return rest(http.MethodGet, "/tasks/t1?historyLength=2", nil)
		case "ListTasks":
			q := url.Values{"contextId": {"c1"}, "pageSize": {"5"}, "pageToken": {"p<&>"}, "historyLength": {"2"}, "includeArtifacts": {"true"}}
			if b == wire.REST03 {
				q.Set("status", string(pbjson.EncodeTaskState(a2a.TaskStateWorking)))
				q.Set("lastUpdatedAfter", "2026-01-02T03:04:05Z")
			} else {
				q.Set("status", string(a2a.TaskStateWorking))
				q.Set("statusTimestampAfter", "2026-01-02T03:04:05Z")
			}
			return rest(http.MethodGet, "/tasks?"+q.Encode(), nil)
		case "CancelTask":
			return rest(http.MethodPost, "/tasks/t1:cancel", nil)
		case "SubscribeToTask":
			get, post := rest(http.MethodGet, "/tasks/t1:subscribe", nil), rest(http.MethodPost, "/tasks/t1:subscribe", nil)
			get[0].variant, post[0].variant = "(GET)", "(POST)"
			return append(get, post...)
		case "GetTaskPushConfig":
			return rest(http.MethodGet, "/tasks/t1/pushNotificationConfigs/c1", nil)
		case "CreateTaskPushConfig":
			body := oracleJSON(pc)
			if b == wire.REST03 {
				body, _ = pbjson.ToProtoCreatePushConfigRequest(pc)
			}
			return rest(http.MethodPost, "/tasks/t1/pushNotificationConfigs", body)
		case "ListTaskPushConfigs":
			return rest(http.MethodGet, "/tasks/t1/pushNotificationConfigs", nil)
		case "DeleteTaskPushConfig":
			return rest(http.MethodDelete, "/tasks/t1/pushNotificationConfigs/c1", nil)
		case "GetExtendedAgentCard":
			if b == wire.REST03 {
				return []oracleRoute{{method: http.MethodGet, target: "/v1/card"}}
			}
			return rest(http.MethodGet, "/extendedAgentCard", nil)
		}
	}
	panic("oracle: no route for " + op + " on " + b.String())
}

// oracleCases returns every case: each operation on each binding with each
// outcome, then a few requests where pactum differs on purpose.
func oracleCases() []*oracleCase {
	var cases []*oracleCase
	n := 0
	add := func(op string, b wire.Binding, r oracleRoute, o oracleOutcome) *oracleCase {
		c := &oracleCase{
			name: fmt.Sprintf("%s/%s%s/%s", oracleBindingName[b], op, r.variant, o.name),
			op:   op, binding: b, outcome: o,
			method: r.method, target: r.target, body: r.body,
			rpcMethod: r.rpcMethod, params: r.params,
		}
		if b.RPC() {
			// Both ids where a2a-go and pactum agree, by turns.
			c.id = []string{`"r-1"`, `7`}[n%2]
			n++
			c.body = oracleEnvelope(c.id, c.rpcMethod, c.params)
		}
		cases = append(cases, c)
		return c
	}
	for _, op := range oracleOps {
		for _, b := range oracleBindings {
			for _, r := range oracleRoutes(op.name, b) {
				if b == wire.JSONRPC03 && op.name == "ListTasks" {
					add(op.name, b, r, oracleOutcome{name: "unknown-method"})
					continue
				}
				for _, o := range oracleOutcomes(op.name, op.stream) {
					add(op.name, b, r, o)
				}
			}
		}
	}

	// Requests pactum answers differently on purpose.
	for _, b := range oracleBindings {
		r := oracleRoutes("SendMessage", b)[0]
		if b.RPC() {
			r.params = `{"message":5}`
		} else {
			r.body = []byte(`{"message":5}`)
		}
		add("SendMessage", b, r, oracleOutcome{name: "badparams"})
	}
	for _, b := range []wire.Binding{wire.REST, wire.REST03} {
		r := oracleRoutes("GetTask", b)[0]
		r.target, r.variant = strings.Replace(r.target, "historyLength=2", "historyLength=two", 1), "[badquery]"
		add("GetTask", b, r, oracleOutcome{name: "result"})
	}
	for _, b := range []wire.Binding{wire.JSONRPC, wire.JSONRPC03} {
		c := add("GetTask", b, oracleRoutes("GetTask", b)[0], oracleOutcome{name: "notification"})
		c.id, c.body = "", oracleEnvelope("", c.rpcMethod, c.params)
	}
	for _, op := range []string{"GetExtendedAgentCard", "ListTasks"} {
		r := oracleRoutes(op, wire.JSONRPC)[0]
		r.params = ""
		add(op, wire.JSONRPC, r, oracleOutcome{name: "noparams"})
	}
	r := oracleRoutes("CancelTask", wire.REST)[0]
	r.variant, r.body = "[body]", []byte(`{"metadata":{"reason":"<b>&"}}`)
	add("CancelTask", wire.REST, r, oracleOutcome{name: "result"})
	return cases
}

// oracleCaseNamed returns the case of that name.
func oracleCaseNamed(t *testing.T, name string) *oracleCase {
	t.Helper()
	for _, c := range oracleCases() {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no oracle case %q", name)
	return nil
}

// oracleEnvelope is a JSON-RPC request (id "": none; params "": none).
func oracleEnvelope(id, method, params string) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0"`)
	if id != "" {
		b.WriteString(`,"id":` + id)
	}
	b.WriteString(`,"method":` + string(oracleJSON(method)))
	if params != "" {
		b.WriteString(`,"params":` + params)
	}
	b.WriteString("}")
	return []byte(b.String())
}

// request returns the HTTP request of c with body.
func (c *oracleCase) request(ctx context.Context, body []byte) *http.Request {
	r := httptest.NewRequestWithContext(ctx, c.method, c.target, bytes.NewReader(body))
	if len(body) > 0 {
		r.Header.Set("Content-Type", "application/json")
	}
	if c.binding.Legacy() {
		r.Header.Set("X-A2A-Extensions", "https://ext.example.com/x")
	} else {
		r.Header.Set("A2A-Version", "1.0")
		r.Header.Set("A2A-Extensions", "https://ext.example.com/x")
	}
	r.Header.Set("X-Oracle", "<b>&")
	return r
}

// serveA2AGo answers c through a2a-go's transport of c's binding, the stub
// having outcome o, the request body being body.
func (c *oracleCase) serveA2AGo(o oracleOutcome, body []byte) (a oracleAnswer) {
	stub := &oracleStub{o: o}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// a2a-go's 0.3 JSON-RPC stream, after a panic's error event, waits
	// for the request's context to end: the panic handler ends it.
	opt := a2asrv.WithTransportPanicHandler(func(any) error { cancel(); return oraclePanicError() })
	var h http.Handler
	switch c.binding {
	case wire.JSONRPC:
		h = a2asrv.NewJSONRPCHandler(stub, opt)
	case wire.JSONRPC03:
		h = a2av0.NewJSONRPCHandler(stub, opt)
	case wire.REST:
		h = a2asrv.NewRESTHandler(stub, opt)
	case wire.REST03:
		h = a2av0.NewRESTHandler(stub, opt)
	}
	rec := httptest.NewRecorder()
	func() {
		defer func() { a.panicked = recover() }()
		h.ServeHTTP(rec, c.request(ctx, body))
	}()
	return oracleAnswerOf(a, rec, stub)
}

// servePactum answers c through the dispatcher, as Server.serveAgent calls
// it (the JSON-RPC envelope checked by wire.ParseRequest).
func (c *oracleCase) servePactum() (a oracleAnswer) {
	stub := &oracleStub{o: c.outcome}
	d := &dispatcher{h: stub, recovered: func(any) error { return oraclePanicError() }}
	r := c.request(context.Background(), c.body)
	body, _ := io.ReadAll(r.Body)
	rec := httptest.NewRecorder()
	func() {
		defer func() { a.panicked = recover() }()
		if !c.binding.RPC() {
			d.serveREST(rec, r, c.binding, r.URL.Path, body)
			return
		}
		q, refusal := wire.ParseRequest(body)
		if refusal != nil {
			panic(fmt.Sprintf("the oracle's request was refused: %v", refusal.Err))
		}
		d.serveRPC(rec, r, c.binding, q)
	}()
	return oracleAnswerOf(a, rec, stub)
}

func oracleAnswerOf(a oracleAnswer, rec *httptest.ResponseRecorder, stub *oracleStub) oracleAnswer {
	res := rec.Result()
	a.status, a.header, a.body, a.calls = res.StatusCode, res.Header, rec.Body.Bytes(), stub.calls
	return a
}

// ----- the stub -----

// oracleOutcome is what the stub's operations do.
type oracleOutcome struct {
	name string
	// err makes the error the operation fails with (nil: it succeeds).
	err func() error
	// panics: the operation panics.
	panics bool
	// message: SendMessage answers a message, a stream has one message.
	message bool
	// after: a stream fails (or panics) after its events, not before.
	after bool
}

// oraclePanicError is the error a panic is recovered as on both sides.
func oraclePanicError() error {
	return a2a.NewError(a2a.ErrInternalError, "internal error (oracle panic)")
}

// oracleErrors are the ways an operation fails: every A2A sentinel as it
// is, with a message and ErrorInfo metadata, with a message and details,
// wrapped by fmt.Errorf; an error of no A2A kind; a panic.
func oracleErrors() []oracleOutcome {
	var out []oracleOutcome
	for _, s := range wire.Sentinels() {
		r := a2a.ErrorReason(s)
		out = append(out,
			oracleOutcome{name: r, err: func() error { return s }},
			oracleOutcome{name: r + "+meta", err: func() error {
				return a2a.NewError(s, "msg <b>& "+r).WithErrorInfoMeta(map[string]string{"k": "v", "z": "<b>&"})
			}},
			oracleOutcome{name: r + "+details", err: func() error {
				return a2a.NewError(s, "msg "+r).WithDetails(map[string]any{"hint": "<b>&", "n": 1, "list": []any{"a", 2}})
			}},
			oracleOutcome{name: r + "+wrapped", err: func() error { return fmt.Errorf("oracle: %w", s) }},
		)
	}
	return append(out,
		oracleOutcome{name: "internal", err: func() error { return errors.New("disk on fire <b>&") }},
		oracleOutcome{name: "panic", panics: true},
	)
}

// oracleOutcomes are the outcomes of an operation: its results and every
// error (for streams, before and after the events).
func oracleOutcomes(op string, stream bool) []oracleOutcome {
	var out []oracleOutcome
	if !stream {
		out = append(out, oracleOutcome{name: "result"})
		if op == "SendMessage" {
			out = append(out, oracleOutcome{name: "result:message", message: true})
		}
		for _, e := range oracleErrors() {
			e.name = "err:" + e.name
			out = append(out, e)
		}
		return out
	}
	out = append(out, oracleOutcome{name: "events"})
	if op == "SendStreamingMessage" {
		out = append(out, oracleOutcome{name: "events:message", message: true})
	}
	for _, e := range oracleErrors() {
		first, after := e, e
		first.name, after.name, after.after = "first:"+e.name, "after:"+e.name, true
		out = append(out, first, after)
	}
	return out
}

// oracleStub is a RequestHandler with canned answers: no store, no
// goroutines. It records each call (operation, request, service params).
type oracleStub struct {
	o     oracleOutcome
	calls []string
}

var _ a2asrv.RequestHandler = (*oracleStub)(nil)

func (s *oracleStub) record(ctx context.Context, op string, req any) {
	call := op + " " + string(oracleJSON(req))
	if cc, ok := a2asrv.CallContextFrom(ctx); ok {
		var params []string
		for k, v := range cc.ServiceParams().List() {
			params = append(params, k+"="+strings.Join(v, ","))
		}
		slices.Sort(params)
		call += " " + strings.Join(params, " ")
	} else {
		call += " (no call context)"
	}
	s.calls = append(s.calls, call)
}

// fail returns the operation's error (nil: succeed), or panics.
func (s *oracleStub) fail() error {
	if s.o.panics {
		panic("oracle: the handler panics <b>&")
	}
	if s.o.err != nil {
		return s.o.err()
	}
	return nil
}

func oracleUnary[R any](s *oracleStub, ctx context.Context, op string, req any, result R) (R, error) {
	s.record(ctx, op, req)
	if err := s.fail(); err != nil {
		var zero R
		return zero, err
	}
	return result, nil
}

func (s *oracleStub) stream(ctx context.Context, op string, req any) iter.Seq2[a2a.Event, error] {
	s.record(ctx, op, req)
	return func(yield func(a2a.Event, error) bool) {
		if !s.o.after {
			if err := s.fail(); err != nil {
				yield(nil, err)
				return
			}
		}
		events := oracleStreamEvents()
		if s.o.message {
			events = []a2a.Event{oracleMessage()}
		}
		for _, ev := range events {
			if !yield(ev, nil) {
				return
			}
		}
		if s.o.after {
			if err := s.fail(); err != nil {
				yield(nil, err)
			}
		}
	}
}

func (s *oracleStub) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	var res a2a.SendMessageResult = oracleTask()
	if s.o.message {
		res = oracleMessage()
	}
	return oracleUnary(s, ctx, "SendMessage", req, res)
}

func (s *oracleStub) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return s.stream(ctx, "SendStreamingMessage", req)
}

func (s *oracleStub) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return oracleUnary(s, ctx, "GetTask", req, oracleTask())
}

func (s *oracleStub) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	working := oracleTask()
	working.ID, working.Status.State, working.Artifacts = "t2", a2a.TaskStateWorking, nil
	res := &a2a.ListTasksResponse{Tasks: []*a2a.Task{oracleTask(), working}, TotalSize: 7, PageSize: 2, NextPageToken: "next<&>"}
	return oracleUnary(s, ctx, "ListTasks", req, res)
}

func (s *oracleStub) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	t := oracleTask()
	t.Status.State = a2a.TaskStateCanceled
	return oracleUnary(s, ctx, "CancelTask", req, t)
}

func (s *oracleStub) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return s.stream(ctx, "SubscribeToTask", req)
}

func (s *oracleStub) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return oracleUnary(s, ctx, "GetTaskPushConfig", req, oraclePushConfig("c1"))
}

func (s *oracleStub) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	return oracleUnary(s, ctx, "CreateTaskPushConfig", req, oraclePushConfig("c1"))
}

func (s *oracleStub) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	res := &a2a.ListTaskPushConfigResponse{Configs: []*a2a.PushConfig{oraclePushConfig("c1"), oraclePushConfig("c2")}}
	return oracleUnary(s, ctx, "ListTaskPushConfigs", req, res)
}

func (s *oracleStub) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	_, err := oracleUnary(s, ctx, "DeleteTaskPushConfig", req, struct{}{})
	return err
}

func (s *oracleStub) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return oracleUnary(s, ctx, "GetExtendedAgentCard", req, oracleCard())
}

// ----- canned values -----

var oracleTime = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)

func oraclePtr[T any](v T) *T { return &v }

func oracleJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func oracleSendRequest() *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: "m1", Role: a2a.MessageRoleUser, ContextID: "c1",
			Parts: a2a.ContentParts{a2a.NewTextPart("hello <b>&"), a2a.NewDataPart(map[string]any{"q": "<i>"})}},
		Config:   &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/plain"}, HistoryLength: oraclePtr(3)},
		Metadata: map[string]any{"trace": "<b>&"},
	}
}

func oracleListRequest() *a2a.ListTasksRequest {
	after := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &a2a.ListTasksRequest{ContextID: "c1", Status: a2a.TaskStateWorking, PageSize: 5, PageToken: "p<&>",
		HistoryLength: oraclePtr(2), StatusTimestampAfter: &after, IncludeArtifacts: true}
}

func oracleMessage() *a2a.Message {
	return &a2a.Message{ID: "m3", Role: a2a.MessageRoleAgent, ContextID: "c1",
		Parts:    a2a.ContentParts{a2a.NewTextPart("answer <b>&"), a2a.NewDataPart(map[string]any{"answer": 42, "html": "<b>&"})},
		Metadata: map[string]any{"html": "<b>&"}}
}

func oracleArtifact() *a2a.Artifact {
	return &a2a.Artifact{ID: "a1", Name: "report <b>&", Description: "the report",
		Parts: a2a.ContentParts{
			a2a.NewTextPart("text <b>&"),
			a2a.NewDataPart(map[string]any{"rows": []any{1, 2.5, "<x>"}, "k": "<b>&"}),
			&a2a.Part{Content: a2a.URL("https://files.example.com/f.pdf?a=1&b=<2>"), Filename: "f.pdf", MediaType: "application/pdf"},
			&a2a.Part{Content: a2a.Raw("raw <b>&"), Filename: "r.bin", MediaType: "application/octet-stream"},
		},
		Metadata: map[string]any{"note": "<b>&"}}
}

func oracleTask() *a2a.Task {
	ts := oracleTime
	return &a2a.Task{
		ID: "t1", ContextID: "c1",
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &ts,
			Message: &a2a.Message{ID: "m2", Role: a2a.MessageRoleAgent, TaskID: "t1", ContextID: "c1", Parts: a2a.ContentParts{a2a.NewTextPart("done <b>&")}}},
		History: []*a2a.Message{
			{ID: "m1", Role: a2a.MessageRoleUser, TaskID: "t1", ContextID: "c1", Parts: a2a.ContentParts{a2a.NewTextPart("hello <b>&")}},
			{ID: "m2", Role: a2a.MessageRoleAgent, TaskID: "t1", ContextID: "c1", Parts: a2a.ContentParts{a2a.NewDataPart(map[string]any{"answer": 42})}},
		},
		Artifacts: []*a2a.Artifact{oracleArtifact()},
		Metadata:  map[string]any{"html": "<b>&", "n": 1, "nested": map[string]any{"x": "<i>"}},
	}
}

// oracleStreamEvents is a stream's events: the task, a status update, an
// artifact update, the final status.
func oracleStreamEvents() []a2a.Event {
	ts := oracleTime
	submitted := oracleTask()
	submitted.Status, submitted.Artifacts = a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &ts}, nil
	return []a2a.Event{
		submitted,
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &ts,
			Message: &a2a.Message{ID: "m4", Role: a2a.MessageRoleAgent, TaskID: "t1", ContextID: "c1", Parts: a2a.ContentParts{a2a.NewTextPart("working <b>&")}}}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Artifact: oracleArtifact(), LastChunk: true, Metadata: map[string]any{"chunk": "<1>"}},
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &ts},
			Metadata: map[string]any{"final": "<b>&"}},
	}
}

func oraclePushConfig(id string) *a2a.PushConfig {
	return &a2a.PushConfig{TaskID: "t1", ID: id, URL: "https://hooks.example.com/a2a?x=<1>&y=2", Token: "tok&<>",
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred<&>"}}
}

func oracleCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name: "oracle <b>&", Description: "an agent for the oracle <b>&", Version: "1.2.3",
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: "https://agent.example.com/a2a?x=<1>&y", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
			{URL: "https://agent.example.com/a2a/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"},
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true, ExtendedAgentCard: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Provider:           &a2a.AgentProvider{Org: "Oracle & Co <x>", URL: "https://example.com"},
		Skills:             []a2a.AgentSkill{{ID: "s1", Name: "skill", Description: "does <b>&", Tags: []string{"t&"}, Examples: []string{"<ex>"}}},
	}
}
