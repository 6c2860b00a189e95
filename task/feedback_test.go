package task_test

import (
	"encoding/json"
	"testing"

	"github.com/pactum/pactum/task"
)

func userMsg(text, mark string) task.Message {
	m := task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart(text)}}
	if mark != "" {
		m.Metadata = map[string]any{task.RetryKey: mark}
	}
	return m
}

func agentMsg(mark string, parts ...task.Part) task.Message {
	m := task.Message{Role: task.RoleAgent, Parts: parts}
	if mark != "" {
		m.Metadata = map[string]any{task.RetryKey: mark}
	}
	return m
}

func request(history ...task.Message) *task.Request {
	req := &task.Request{Envelope: task.Envelope{Input: history[0]}, History: history}
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == task.RoleUser {
			req.Message = history[i]
			break
		}
	}
	return req
}

// TestRequestText: a first attempt's text is its message's; an attempt
// after feedback gets the turn's request, the rejected answer and the
// feedback, in the documented layout; after two retries, the newest
// answer and feedback; after an escalated violation is answered, the
// question's output is the rejected answer and the question and the reply
// are what to fix; an input_required reply that is not feedback is the
// message alone.
func TestRequestText(t *testing.T) {
	in := userMsg("the quick brown fox", "")
	fb1 := userMsg("Fix: say count", task.RetryFeedback)
	fb2 := userMsg("Fix: a number", task.RetryFeedback)
	cases := []struct {
		name, want string
		req        *task.Request
	}{
		{"first attempt", "the quick brown fox", request(in)},
		{"retry", "the quick brown fox\n\n# Your previous answer (rejected)\nI did not count\n\n# What to fix\nFix: say count\n",
			request(in, agentMsg(task.RetryAnswer, task.TextPart("I did not count")), fb1)},
		{"retry without an answer", "the quick brown fox\n\n# What to fix\nFix: say count\n",
			request(in, fb1)},
		{"second retry", "the quick brown fox\n\n# Your previous answer (rejected)\n{\"count\":\"four\"}\n\n# What to fix\nFix: a number\n",
			request(in, agentMsg(task.RetryAnswer, task.TextPart("I did not count")), fb1,
				agentMsg(task.RetryAnswer, task.DataPart(json.RawMessage(`{"count":"four"}`))), fb2)},
		{"escalation answered", "the quick brown fox\n\n# Your previous answer (rejected)\nnot JSON\n\n# What to fix\nThe answer did not meet its contract\n\nThe reply:\nplease use JSON\n",
			request(in, agentMsg(task.RetryQuestion, task.TextPart("The answer did not meet its contract"), task.TextPart("not JSON")), userMsg("please use JSON", ""))},
		{"input_required answered", "blue",
			request(in, agentMsg("", task.TextPart("which colour?")), userMsg("blue", ""))},
		{"retry of a later turn", "blue\n\n# Your previous answer (rejected)\nred\n\n# What to fix\nFix: say count\n",
			request(in, agentMsg("", task.TextPart("which colour?")), userMsg("blue", ""), agentMsg(task.RetryAnswer, task.TextPart("red")), fb1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.req.Text(); got != c.want {
				t.Errorf("Text() =\n%q\nwant\n%q", got, c.want)
			}
			orig := c.req.Original()
			if rt := c.req.Retry(); rt == nil {
				if orig.Text() != c.req.Message.Text() {
					t.Errorf("Original() %q, want the message %q", orig.Text(), c.req.Message.Text())
				}
			} else if orig.Text() != rt.Request.Text() || rt.Request.Text() == c.req.Message.Text() {
				t.Errorf("Original() %q, Retry().Request %q, Message %q", orig.Text(), rt.Request.Text(), c.req.Message.Text())
			}
		})
	}
}

// TestRender: data parts as their JSON, files as a line naming them.
func TestRender(t *testing.T) {
	m := task.Message{Parts: []task.Part{
		task.TextPart("a"),
		task.DataPart(json.RawMessage(`{"x":1}`)),
		{Kind: task.PartURL, URL: "https://example.com/r.pdf", Filename: "r.pdf", MediaType: "application/pdf"},
	}}
	want := "a\n{\"x\":1}\n[file r.pdf (application/pdf) https://example.com/r.pdf]"
	if got := task.Render(m); got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}
