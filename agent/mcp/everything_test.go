package mcpagent

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/task"
)

// The tests in this file run @modelcontextprotocol/server-everything (see
// testdata/npm) as a real subprocess over stdio.

func TestEverythingEchoText(t *testing.T) {
	t.Parallel()
	b := everything(t, "echo")
	if d := b.r.Metadata().Description; !strings.Contains(d, "echo") {
		t.Errorf("description before any call = %q, want the configured tool named", d)
	}
	res, err := b.invoke(t, "hello, MCP")
	if got := mustText(t, res, err); got != "Echo: hello, MCP" {
		t.Errorf("text = %q, want %q", got, "Echo: hello, MCP")
	}
	if res.Artifacts[0].Name != "output" || res.Artifacts[0].ID == "" {
		t.Errorf("artifact id/name = %q/%q", res.Artifacts[0].ID, res.Artifacts[0].Name)
	}
	if res.Message == nil || res.Message.Text() != "Echo: hello, MCP" || res.Message.Role != task.RoleAgent {
		t.Errorf("message = %+v, want the agent's text", res.Message)
	}
	md := b.r.Metadata()
	if md.Type != "mcp" || md.Description != "Echoes back the input string" || !md.Streaming {
		t.Errorf("metadata after a call = %+v, want type mcp and the tool's description", md)
	}
}

func TestEverythingSumFromData(t *testing.T) {
	t.Parallel()
	b := everything(t, "get-sum")
	res, err := b.invokeData(t, `{"a": 2, "b": 3}`)
	if got := mustText(t, res, err); got != "The sum of 2 and 3 is 5." {
		t.Errorf("text = %q", got)
	}
	// A fixed argument, overridden by the message's own.
	b = everything(t, "get-sum", "arguments: {a: 10, b: 1}")
	res, err = b.invokeData(t, `{"b": 5}`)
	if got := mustText(t, res, err); got != "The sum of 10 and 5 is 15." {
		t.Errorf("text with defaults = %q", got)
	}
}

func TestEverythingStructuredContent(t *testing.T) {
	t.Parallel()
	// location is the tool's only required argument, a string: the text
	// goes there.
	b := everything(t, "get-structured-content")
	res, err := b.invoke(t, "Chicago")
	if err != nil {
		t.Fatal(err)
	}
	parts := res.Artifacts[0].Parts
	if len(parts) != 2 || parts[0].Kind != task.PartText || parts[1].Kind != task.PartData {
		t.Fatalf("parts = %+v, want text then data", parts)
	}
	var weather struct {
		Temperature *float64 `json:"temperature"`
		Conditions  string   `json:"conditions"`
	}
	if err := json.Unmarshal(parts[1].Data, &weather); err != nil || weather.Temperature == nil || weather.Conditions == "" {
		t.Errorf("structured content %s: %v", parts[1].Data, err)
	}
}

func TestEverythingFileParts(t *testing.T) {
	t.Parallel()
	t.Run("embedded resource", func(t *testing.T) {
		t.Parallel()
		b := everything(t, "get-resource-reference")
		res, err := b.invokeData(t, `{"resourceType": "Text", "resourceId": 2}`)
		if err != nil {
			t.Fatal(err)
		}
		var file *task.Part
		for i, p := range res.Artifacts[0].Parts {
			if p.Kind == task.PartRaw {
				file = &res.Artifacts[0].Parts[i]
			}
		}
		if file == nil {
			t.Fatalf("parts = %+v, want a file part", res.Artifacts[0].Parts)
		}
		if file.Metadata["mcp.uri"] != "demo://resource/dynamic/text/2" || file.MediaType != "text/plain" ||
			file.Filename != "2" || !strings.Contains(string(file.Raw), "Resource 2") {
			t.Errorf("file part = %+v (raw %q)", *file, file.Raw)
		}
	})
	t.Run("resource links", func(t *testing.T) {
		t.Parallel()
		b := everything(t, "get-resource-links")
		res, err := b.invokeData(t, `{"count": 2}`)
		if err != nil {
			t.Fatal(err)
		}
		var links []task.Part
		for _, p := range res.Artifacts[0].Parts {
			if p.Kind == task.PartURL {
				links = append(links, p)
			}
		}
		if len(links) != 2 || !strings.HasPrefix(links[0].URL, "demo://resource/") || links[0].Filename == "" || links[0].MediaType == "" {
			t.Errorf("links = %+v, want 2 file parts by URI", links)
		}
	})
	t.Run("image", func(t *testing.T) {
		t.Parallel()
		// The tool takes no arguments: the message text is not passed.
		b := everything(t, "get-tiny-image")
		res, err := b.invoke(t, "a picture, please")
		if err != nil {
			t.Fatal(err)
		}
		var img *task.Part
		for i, p := range res.Artifacts[0].Parts {
			if p.Kind == task.PartRaw {
				img = &res.Artifacts[0].Parts[i]
			}
		}
		if img == nil || img.MediaType != "image/png" || !strings.HasPrefix(string(img.Raw), "\x89PNG") {
			t.Errorf("image part = %+v, want PNG bytes", img)
		}
	})
}

func TestEverythingProgressStreams(t *testing.T) {
	t.Parallel()
	b := everything(t, "trigger-long-running-operation")
	var rec agenttest.Recorder
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	res, err := b.r.Stream(ctx, dataRequest(`{"duration": 1, "steps": 4}`), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	chunks := rec.Chunks()
	agenttest.CheckChunks(t, chunks, res)
	// Every notification is seen before the result: none is lost.
	want := []string{"1/4\n", "2/4\n", "3/4\n", "4/4\n", ""}
	if texts := rec.Texts(); !slices.Equal(texts, want) {
		t.Errorf("progress chunks = %q, want %q", texts, want)
	}
	if len(res.Artifacts) != 2 || res.Artifacts[0].Name != "progress" || res.Artifacts[1].Name != "output" {
		t.Fatalf("artifacts = %+v, want progress and output", res.Artifacts)
	}
	if got := agenttest.PartsText(res.Artifacts[1].Parts); !strings.Contains(got, "Long running operation completed") {
		t.Errorf("output = %q", got)
	}
	if got := agenttest.PartsText(res.Artifacts[0].Parts); got != "1/4\n2/4\n3/4\n4/4\n" {
		t.Errorf("progress artifact = %q", got)
	}
}

func TestEverythingToolErrorIsPermanent(t *testing.T) {
	t.Parallel()
	b := everything(t, "get-sum")
	_, err := b.invokeData(t, `{"a": "two", "b": 3}`)
	wantPermanent(t, err, task.CodeAgentFailed, `tool "get-sum" reported an error`, "expected number")
	// The session survives a tool error.
	res, err := b.invokeData(t, `{"a": 1, "b": 1}`)
	mustText(t, res, err)
	if b.starts() != 1 {
		t.Errorf("sessions started = %d, want 1", b.starts())
	}
}

func TestEverythingBadInput(t *testing.T) {
	t.Parallel()
	b := everything(t, "get-sum")
	// get-sum needs two numbers: text cannot be mapped.
	_, err := b.invoke(t, "2 + 3")
	wantPermanent(t, err, task.CodeInvalidArgument, `the tool requires "a", "b"`)
	_, err = b.invokeData(t, `[2, 3]`)
	wantPermanent(t, err, task.CodeInvalidArgument, "must be a JSON object", "got an array")
}

func TestEverythingUnknownTool(t *testing.T) {
	t.Parallel()
	b := everything(t, "no-such-tool")
	_, err := b.invoke(t, "hi")
	wantPermanent(t, err, task.CodeNotFound, `has no tool "no-such-tool"`, "echo", "get-sum")
}

// TestEverythingRestartAfterKill defines what happens when a stdio server
// dies between two calls: once the runtime has seen the program go (it was
// reaped), the next call succeeds on a newly started server. The dead
// session is either already dropped, or the call's request cannot be
// written to it and is sent again on a new session: in no case does the
// call fail.
func TestEverythingRestartAfterKill(t *testing.T) {
	t.Parallel()
	b := everything(t, "echo")
	b.text(t, "one")
	pid := serverProcess(t, b.serverPID())
	if pid == 0 {
		t.Fatal("no server process after a call")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if got := b.text(t, "two"); got != "Echo: two" {
		t.Errorf("text after restart = %q", got)
	}
	if pid2 := serverProcess(t, b.serverPID()); pid2 == 0 || pid2 == pid {
		t.Errorf("server pid after restart = %d, want a new process (old %d)", pid2, pid)
	}
	if b.starts() != 2 {
		t.Errorf("sessions started = %d, want 2", b.starts())
	}
}

// TestEverythingKillDuringCall: a server that dies while a call is in
// flight fails that attempt with a retryable error naming how it ended;
// the next attempt starts the server again.
func TestEverythingKillDuringCall(t *testing.T) {
	t.Parallel()
	b := everything(t, "trigger-long-running-operation")
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	var once sync.Once
	emit := func(c task.ArtifactChunk) error {
		// The first progress notification: the call is in flight.
		once.Do(func() {
			if err := syscall.Kill(b.serverPID(), syscall.SIGKILL); err != nil {
				t.Errorf("kill: %v", err)
			}
		})
		return nil
	}
	_, err := b.r.Stream(ctx, dataRequest(`{"duration": 20, "steps": 40}`), emit)
	wantRetryable(t, err, task.CodeUnavailable, "connection lost", "signal: killed")
	res, err := b.invokeData(t, `{"duration": 0.1, "steps": 1}`)
	if got := mustText(t, res, err); !strings.Contains(got, "completed") {
		t.Errorf("text after restart = %q", got)
	}
	if b.starts() != 2 {
		t.Errorf("sessions started = %d, want 2", b.starts())
	}
}

func TestEverythingConcurrentCallsShareOneSession(t *testing.T) {
	t.Parallel()
	b := everything(t, "echo")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			want := "Echo: call " + string(rune('a'+i))
			res, err := b.invoke(t, "call "+string(rune('a'+i)))
			if err != nil {
				errs <- err
				return
			}
			if got := agenttest.PartsText(res.Artifacts[0].Parts); got != want {
				errs <- errors.New("got " + got + ", want " + want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if b.starts() != 1 {
		t.Errorf("sessions started = %d, want 1 shared by %d concurrent calls", b.starts(), n)
	}
}

func TestEverythingCloseStopsServer(t *testing.T) {
	t.Parallel()
	b := everything(t, "echo")
	b.text(t, "hi")
	pid := b.serverPID()
	if err := b.r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Close has reaped the server: the process is gone at once.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server %d after Close: kill -0 = %v, want ESRCH", pid, err)
	}
	if err := b.r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err := b.invoke(t, "again")
	if !errors.Is(err, errClosed) || task.IsPermanent(err) {
		t.Errorf("call after Close: %v, want retryable errClosed", err)
	}
}

func TestEverythingCancel(t *testing.T) {
	t.Parallel()
	b := everything(t, "trigger-long-running-operation")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var once sync.Once
	emit := func(task.ArtifactChunk) error {
		once.Do(cancel)
		return nil
	}
	_, err := b.r.Stream(ctx, dataRequest(`{"duration": 20, "steps": 40}`), emit)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The session is still good.
	res, err := b.invokeData(t, `{"duration": 0.1, "steps": 1}`)
	mustText(t, res, err)
	if b.starts() != 1 {
		t.Errorf("sessions started = %d, want 1", b.starts())
	}
}
