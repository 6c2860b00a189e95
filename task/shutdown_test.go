package task_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/task"
)

// blocking is a runner that says when an attempt started and runs until
// its context ends; it records when the attempt returned.
type blocking struct {
	started  chan struct{}
	returned atomic.Int64 // unix nanoseconds of the last return
	cause    atomic.Value // context.Cause of the attempt's end (an error)
}

func (b *blocking) Run(ctx context.Context, _ *task.Request, _ task.Emit) (*task.Result, error) {
	b.started <- struct{}{}
	<-ctx.Done()
	b.cause.Store(context.Cause(ctx))
	// Ending takes a moment (an exec command's SIGTERM): the release
	// must wait for it.
	time.Sleep(50 * time.Millisecond)
	b.returned.Store(time.Now().UnixNano())
	return nil, ctx.Err()
}

// TestStopReleasesCutAttempt: an attempt still running when Stop's drain
// ends is canceled and, once it has returned, its task is queued again at
// once (not left in_progress under a lease), with code node_stopped, in a
// recorded and audited transition; on its last attempt it is
// dead-lettered, as an expired lease would.
func TestStopReleasesCutAttempt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		maxAttempts int
		want        task.State
	}{
		{"attempts left", 3, task.StateQueued},
		{"last attempt", 1, task.StateDeadLetter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &blocking{started: make(chan struct{}, 1)}
			b := setup(t, task.Options{LeaseFor: time.Minute, Agents: []task.AgentSpec{{
				Name: "block", Runner: r, Retry: task.RetryPolicy{MaxAttempts: tc.maxAttempts, InitialBackoff: time.Hour},
			}}})
			ctx := context.Background()
			res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "alice", "hi")})
			if err != nil {
				t.Fatal(err)
			}
			recv(t, r.started, "attempt start")
			if n := b.coord.Drain(); n != 1 {
				t.Errorf("Drain = %d running attempts; want 1", n)
			}
			// The drain's deadline has passed: Stop cuts the attempt
			// at once.
			sctx, cancel := context.WithDeadline(ctx, time.Now())
			defer cancel()
			if err := b.coord.Stop(sctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Stop = %v; want the drain's deadline", err)
			}
			// The runtime can tell a shutdown from a caller's cancel.
			if cause, _ := r.cause.Load().(error); !errors.Is(cause, task.ErrShutdown) {
				t.Errorf("the attempt's context ended with cause %v, want task.ErrShutdown", cause)
			}
			got, err := b.store.GetTask(ctx, res.Task.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tc.want || got.LeaseOwner != "" || !got.LeaseExpires.IsZero() || got.ErrorCode != task.CodeNodeStopped || got.Attempt != 1 {
				t.Fatalf("after Stop: %s, lease %q until %v, code %q, attempt %d (%s); want %s, no lease, node_stopped, attempt 1",
					got.State, got.LeaseOwner, got.LeaseExpires, got.ErrorCode, got.Attempt, got.Reason, tc.want)
			}
			if tc.want == task.StateQueued && got.RunAfter.After(got.UpdatedAt) {
				t.Errorf("queued again to run at %v, after its release at %v: no backoff expected", got.RunAfter, got.UpdatedAt)
			}
			recs, err := b.store.Records(ctx, got.ID)
			if err != nil {
				t.Fatal(err)
			}
			last := recs[len(recs)-1]
			if last.From != task.StateInProgress || last.To != tc.want || last.ErrorCode != task.CodeNodeStopped {
				t.Fatalf("last record %+v; want in_progress → %s, node_stopped", last, tc.want)
			}
			if returned := time.Unix(0, r.returned.Load()); last.At.Before(returned.Add(-time.Millisecond)) {
				t.Errorf("released at %v, before the attempt returned at %v", last.At, returned)
			}
			verifyAudit(t, b)
		})
	}
}

// TestCancelIsNoShutdown: a caller's cancel ends the attempt's context
// with context.Canceled as its cause, not task.ErrShutdown.
func TestCancelIsNoShutdown(t *testing.T) {
	t.Parallel()
	r := &blocking{started: make(chan struct{}, 1)}
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "block", Runner: r}}})
	ctx := context.Background()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "alice", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, r.started, "attempt start")
	if _, err := b.coord.Cancel(ctx, res.Task.ID, ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.cause.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cause, _ := r.cause.Load().(error)
	if !errors.Is(cause, context.Canceled) || errors.Is(cause, task.ErrShutdown) {
		t.Errorf("the attempt's context ended with cause %v, want context.Canceled", cause)
	}
}

// notifyingBuffer is a syncbuf.Buffer that tells changed (without
// blocking) of each write.
type notifyingBuffer struct {
	syncbuf.Buffer
	changed chan struct{}
}

func (b *notifyingBuffer) Write(p []byte) (int, error) {
	n, err := b.Buffer.Write(p)
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return n, err
}

// TestLogsSettledTasksAndTransitions: one info line per settled task with
// its id, agent, state, duration and attempts, and a debug line per
// transition.
func TestLogsSettledTasksAndTransitions(t *testing.T) {
	t.Parallel()
	buf := &notifyingBuffer{changed: make(chan struct{}, 1)}
	log := slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fail := task.RunnerFunc(func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
		return nil, task.Permanent(errors.New("no such thing"))
	})
	b := setup(t, task.Options{Logger: log, Agents: []task.AgentSpec{
		{Name: "echo", Runner: echoRunner(nil)},
		{Name: "broken", Runner: fail},
	}})
	ctx := context.Background()
	ok, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("echo", "alice", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("broken", "alice", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	okT, badT := wait(t, b, ok.Task.ID), wait(t, b, bad.Task.ID)
	// Wait may read a task's end from the store before the worker that
	// wrote it has logged it: wait for both settled lines.
	waitUntil(t, buf.changed, "two settled lines in the log", func() bool {
		return strings.Count(buf.String(), `"msg":"task settled"`) >= 2
	})

	settled := map[string]map[string]any{}
	transitions := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		id, _ := line["task"].(string)
		switch line["msg"] {
		case "task settled":
			if line["level"] != "INFO" {
				t.Errorf("settled line at %v: %s", line["level"], sc.Text())
			}
			if settled[id] != nil {
				t.Errorf("task %s settled twice in the log", id)
			}
			settled[id] = line
		case "task transition":
			if line["level"] != "DEBUG" {
				t.Errorf("transition line at %v: %s", line["level"], sc.Text())
			}
			transitions[id] = append(transitions[id], line["from"].(string)+"→"+line["to"].(string))
		}
	}
	for _, want := range []struct {
		t     *task.Task
		agent string
		state task.State
	}{{okT, "echo", task.StateSucceeded}, {badT, "broken", task.StateFailed}} {
		line := settled[want.t.ID]
		if line == nil {
			t.Errorf("no settled line for %s task %s:\n%s", want.agent, want.t.ID, buf.String())
			continue
		}
		if line["agent"] != want.agent || line["state"] != string(want.state) || line["attempts"] != float64(1) {
			t.Errorf("settled line %v; want agent %s, state %s, attempts 1", line, want.agent, want.state)
		}
		if d, ok := line["duration"].(float64); !ok || time.Duration(d) != want.t.UpdatedAt.Sub(want.t.CreatedAt) {
			t.Errorf("settled line duration %v; want %v", line["duration"], want.t.UpdatedAt.Sub(want.t.CreatedAt))
		}
		got := transitions[want.t.ID]
		wantTr := []string{"requested→validated", "validated→queued", "queued→in_progress", "in_progress→" + string(want.state)}
		if len(got) != len(wantTr) {
			t.Errorf("transitions of %s: %v; want %v", want.agent, got, wantTr)
			continue
		}
		for i := range wantTr {
			if got[i] != wantTr[i] {
				t.Errorf("transitions of %s: %v; want %v", want.agent, got, wantTr)
				break
			}
		}
	}
}
