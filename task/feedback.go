package task

import (
	"strings"
)

// RetryKey is the message metadata key that marks the messages a retry
// after feedback adds to a task's history: RetryAnswer on the answer a
// step rejected, RetryFeedback on what to fix, RetryQuestion on an
// escalated violation's question (whose reply is the feedback). Request.Retry
// reads them back, so an attempt after feedback can be given the whole
// task again, whatever the runtime.
const RetryKey = "pactum.retry"

// The values of RetryKey.
const (
	RetryAnswer   = "answer"
	RetryFeedback = "feedback"
	RetryQuestion = "question"
)

// Retry is what an attempt after feedback is about: the turn's request
// as its first attempt got it, the answer that was rejected, and what to
// fix in it.
type Retry struct {
	// Request is the user message the turn's first attempt got: the
	// envelope's input, or the caller's reply after input_required.
	Request Message `json:"request"`
	// Answer is the rejected answer (nil when the step answered nothing).
	Answer *Message `json:"answer,omitempty"`
	// Feedback is what to fix: the failed assertions, or an escalated
	// violation's question followed by the reply to it.
	Feedback []Message `json:"feedback"`
}

// The headings that delimit a retry's text (Request.Text); documented in
// docs/runtimes.md, "An attempt after feedback".
const (
	RetryAnswerHeading   = "# Your previous answer (rejected)"
	RetryFeedbackHeading = "# What to fix"
)

// Retry returns what an attempt after feedback is about, or nil when the
// attempt is not one: its newest user message is not feedback (a contract
// or handoff retry) nor the reply to an escalated violation.
func (r *Request) Retry() *Retry {
	h := r.History
	last := len(h) - 1
	for last >= 0 && h[last].Role != RoleUser {
		last--
	}
	if last < 0 {
		return nil
	}
	var rt Retry
	before := last - 1
	switch {
	case retryMark(&h[last]) == RetryFeedback:
		rt.Feedback = []Message{h[last]}
		if before >= 0 && retryMark(&h[before]) == RetryAnswer {
			rt.Answer = &h[before]
			before--
		}
	case before >= 0 && h[before].Role == RoleAgent && retryMark(&h[before]) == RetryQuestion:
		// The question's first part says what broke the contract; the
		// parts after it are the output that broke it.
		q := h[before]
		question := Message{Role: RoleAgent, Parts: q.Parts[:min(1, len(q.Parts))]}
		if len(q.Parts) > 1 {
			rt.Answer = &Message{ID: q.ID, Role: RoleAgent, Parts: q.Parts[1:]}
		}
		rt.Feedback = []Message{question, h[last]}
		before--
	default:
		return nil
	}
	// The turn's request is the newest user message before the feedback
	// that is not itself feedback of an earlier retry.
	rt.Request = r.Envelope.Input
	for i := before; i >= 0; i-- {
		if h[i].Role == RoleUser && retryMark(&h[i]) == "" {
			rt.Request = h[i]
			break
		}
	}
	return &rt
}

func retryMark(m *Message) string {
	s, _ := m.Metadata[RetryKey].(string)
	return s
}

// Text returns the attempt's request as one text, for runtimes that
// send an agent one text (an exec agent's standard input and {{.Input}},
// a webhook's chatInput): the newest user message's text, or, for an
// attempt after feedback, a self-contained text: the turn's request as
// its first attempt got it, then the rejected answer under
// RetryAnswerHeading, then what to fix under RetryFeedbackHeading. A
// reader that wants only the request cuts the text at the first line that
// is RetryAnswerHeading or RetryFeedbackHeading.
func (r *Request) Text() string {
	rt := r.Retry()
	if rt == nil {
		return r.Message.Text()
	}
	return rt.Text()
}

// Text returns the retry's self-contained text (Request.Text).
func (rt *Retry) Text() string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(rt.Request.Text(), "\n"))
	b.WriteString("\n\n")
	if rt.Answer != nil {
		b.WriteString(RetryAnswerHeading)
		b.WriteByte('\n')
		b.WriteString(strings.TrimRight(Render(*rt.Answer), "\n"))
		b.WriteString("\n\n")
	}
	b.WriteString(RetryFeedbackHeading)
	b.WriteByte('\n')
	b.WriteString(rt.FeedbackText())
	b.WriteByte('\n')
	return b.String()
}

// FeedbackText returns what to fix as text: the feedback messages
// rendered (Render), an escalated violation's reply after a line "The
// reply:".
func (rt *Retry) FeedbackText() string {
	var b strings.Builder
	for i, m := range rt.Feedback {
		if i > 0 {
			b.WriteString("\n\n")
			if m.Role == RoleUser {
				b.WriteString("The reply:\n")
			}
		}
		b.WriteString(strings.TrimRight(Render(m), "\n"))
	}
	return b.String()
}

// Render returns a message as text: its text parts as they are, each
// data part as its JSON, each file as a line naming it; one part a line.
func Render(m Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		var s string
		switch p.Kind {
		case PartText:
			s = p.Text
		case PartData:
			s = string(p.Data)
		case PartRaw, PartURL:
			s = "[file"
			if p.Filename != "" {
				s += " " + p.Filename
			}
			if p.MediaType != "" {
				s += " (" + p.MediaType + ")"
			}
			if p.URL != "" {
				s += " " + p.URL
			}
			s += "]"
		default:
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String()
}

// Original returns the message an attempt acts on: the newest user
// message, or, for an attempt after feedback, the turn's request the
// feedback is about (Retry.Request). A runtime that cannot act on
// feedback (a tool call) sends it again as it was.
func (r *Request) Original() Message {
	if rt := r.Retry(); rt != nil {
		return rt.Request
	}
	return r.Message
}
