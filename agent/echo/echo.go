// Package echo is pactum's built-in demo runtime (type "echo"): it answers
// every message with the message itself. It needs nothing outside the
// process, so it is the agent of the quick start and the benchmark target,
// and it must stay cheap.
package echo

import (
	"context"
	"fmt"
	"time"
	"unicode"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/task"
)

// Type is the runtime type name used in configuration.
const Type = "echo"

// ArtifactName names the artifact an echo produces.
const ArtifactName = "echo"

func init() {
	agent.Register(Type, func(_ context.Context, spec agent.Spec) (agent.Agent, error) {
		var s Settings
		if err := spec.DecodeInto(&s); err != nil {
			return nil, err
		}
		if err := s.validate(); err != nil {
			return nil, err
		}
		return New(s), nil
	})
}

// Settings configures an echo runtime: the mapping under `echo:` in an
// agent's configuration.
type Settings struct {
	// Prefix is put before the echoed text. Default: none.
	Prefix string `yaml:"prefix"`
	// Delay is how long each attempt waits before answering, to stand in
	// for a slow agent; canceling the attempt ends the wait. Default: 0.
	Delay time.Duration `yaml:"delay"`
}

func (s Settings) validate() error {
	if s.Delay < 0 {
		return fmt.Errorf("delay: must not be negative (got %s)", s.Delay)
	}
	return nil
}

// Runtime is the echo agent.
type Runtime struct {
	s Settings
}

var (
	_ agent.Agent            = (*Runtime)(nil)
	_ agent.Streamer         = (*Runtime)(nil)
	_ agent.MetadataProvider = (*Runtime)(nil)
)

// New returns an echo runtime. A negative Delay counts as none.
func New(s Settings) *Runtime { return &Runtime{s: s} }

// Metadata implements agent.MetadataProvider.
func (r *Runtime) Metadata() agent.Metadata {
	return agent.Metadata{
		Type:        Type,
		Description: "Echoes each message back.",
		Streaming:   true,
		InputModes:  []string{"text/plain"},
		OutputModes: []string{"text/plain"},
	}
}

// Invoke returns one artifact named "echo" holding the message's parts, the
// text prefixed with Prefix, and an agent message with that text.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	return r.result(answer.NewID(), req), nil
}

// Stream emits the text word by word as chunks of the "echo" artifact, then
// returns the same result as Invoke. Text-less messages emit no chunks.
func (r *Runtime) Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	id := answer.NewID()
	var words []string
	if emit != nil {
		words = splitWords(r.s.Prefix + req.Text())
	}
	for i, w := range words {
		err := emit(task.ArtifactChunk{
			Artifact:  task.Artifact{ID: id, Name: ArtifactName, Parts: []task.Part{task.TextPart(w)}},
			Append:    i > 0,
			LastChunk: i == len(words)-1,
		})
		if err != nil {
			return nil, fmt.Errorf("echo: emit chunk: %w", err)
		}
	}
	return r.result(id, req), nil
}

func (r *Runtime) wait(ctx context.Context) error {
	if r.s.Delay <= 0 {
		return nil
	}
	t := time.NewTimer(r.s.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("echo: %w", ctx.Err())
	}
}

func (r *Runtime) result(id string, req *task.Request) *task.Result {
	parts, text := req.Message.Parts, ""
	if rt := req.Retry(); rt != nil {
		// After feedback it echoes the whole task, as one text, and the
		// turn's request's other parts.
		text = rt.Text()
		parts = []task.Part{task.TextPart(text)}
		for _, p := range rt.Request.Parts {
			if p.Kind != task.PartText {
				parts = append(parts, p)
			}
		}
	}
	if text == "" {
		text = req.Message.Text()
	}
	if r.s.Prefix != "" {
		parts = prefixed(parts, r.s.Prefix)
	}
	return &task.Result{
		Artifacts: []task.Artifact{{ID: id, Name: ArtifactName, Parts: parts}},
		Message:   answer.Message(r.s.Prefix + text),
	}
}

// prefixed returns a copy of parts whose first text part starts with
// prefix, or with a text part holding prefix in front when there is none.
func prefixed(parts []task.Part, prefix string) []task.Part {
	for i, p := range parts {
		if p.Kind == task.PartText {
			out := append([]task.Part(nil), parts...)
			out[i].Text = prefix + p.Text
			return out
		}
	}
	return append([]task.Part{task.TextPart(prefix)}, parts...)
}

// splitWords cuts s into words, each keeping the white space that follows
// it (the first also keeps any leading space), so that the pieces
// concatenate back to s.
func splitWords(s string) []string {
	var out []string
	start := 0
	inSpace := false
	seenWord := false
	for i, c := range s {
		space := unicode.IsSpace(c)
		if !space && inSpace && seenWord {
			out = append(out, s[start:i])
			start = i
		}
		if !space {
			seenWord = true
		}
		inSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
