package mcpagent

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/internal/toolargs"
	"github.com/pactum/pactum/task"
)

// arguments returns the tool arguments for msg, as a JSON object: the
// configured defaults, overridden key by key by the message's data part
// (the first, which must hold an object) or, without one, by the message
// text under the text argument.
func arguments(msg *task.Message, s Settings, tool *sdk.Tool) (json.RawMessage, error) {
	args := make(map[string]any, len(s.Arguments)+1)
	for k, v := range s.Arguments {
		args[k] = v
	}
	if data, ok := firstData(msg); ok {
		obj, err := decodeObject(data)
		if err != nil {
			return nil, task.Permanent(task.Errorf(task.CodeInvalidArgument,
				"mcp: tool %q: the message's data part must be a JSON object of tool arguments: %w", s.Tool, err))
		}
		for k, v := range obj {
			args[k] = v
		}
		return encode(args)
	}
	text := msg.Text()
	name := s.Argument
	if name == "" {
		var err error
		if name, err = textArgument(tool, args, text); err != nil {
			return nil, task.Permanent(task.Errorf(task.CodeInvalidArgument, "mcp: tool %q: %w", s.Tool, err))
		}
	}
	if name != "" {
		args[name] = text
	}
	return encode(args)
}

// textArgument picks the argument that receives the message text when none
// is configured (toolargs.TextArgument: the tool's only required string
// argument that the defaults do not set).
func textArgument(tool *sdk.Tool, defaults map[string]any, text string) (string, error) {
	return toolargs.TextArgument(asMap(tool.InputSchema), defaults, text)
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// firstData returns the JSON of the message's first data part.
func firstData(msg *task.Message) (json.RawMessage, bool) {
	for _, p := range msg.Parts {
		if p.Kind == task.PartData {
			return p.Data, true
		}
	}
	return nil, false
}

// decodeObject decodes one JSON object, keeping numbers exact.
func decodeObject(data json.RawMessage) (map[string]any, error) {
	v, err := answer.Decode(data)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("got %s", jsonKind(v))
	}
	return obj, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// encode encodes tool arguments compactly without HTML escaping.
func encode(v any) (json.RawMessage, error) {
	raw, err := task.EncodeData(v)
	if err != nil {
		return nil, task.Permanent(task.Errorf(task.CodeInvalidArgument, "mcp: encode tool arguments: %w", err))
	}
	return raw, nil
}

// mapResult turns a successful tool result into the attempt's result: one
// artifact holding a part for each content item and, last, a data part for
// the structured content; the final message carries the text content, or
// the structured content's JSON when there is no text.
func mapResult(res *sdk.CallToolResult) (*task.Result, error) {
	var parts []task.Part
	for _, c := range res.Content {
		p, err := contentPart(c)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	text := contentText(res.Content)
	if res.StructuredContent != nil {
		raw, err := task.EncodeData(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("encode structured content: %w", err)
		}
		parts = append(parts, task.DataPart(raw))
		if text == "" {
			text = string(raw)
		}
	}
	out := &task.Result{}
	if len(parts) > 0 {
		out.Artifacts = []task.Artifact{{ID: answer.NewID(), Name: artifactName, Parts: parts}}
	}
	if text != "" {
		out.Message = answer.Message(text)
	}
	return out, nil
}

// contentPart maps one content item to a part.
func contentPart(c sdk.Content) (task.Part, error) {
	switch c := c.(type) {
	case *sdk.TextContent:
		return task.TextPart(c.Text), nil
	case *sdk.ImageContent:
		return task.Part{Kind: task.PartRaw, Raw: c.Data, MediaType: c.MIMEType}, nil
	case *sdk.AudioContent:
		return task.Part{Kind: task.PartRaw, Raw: c.Data, MediaType: c.MIMEType}, nil
	case *sdk.EmbeddedResource:
		rc := c.Resource
		if rc == nil {
			return task.Part{}, fmt.Errorf("embedded resource without contents")
		}
		p := task.Part{Kind: task.PartRaw, MediaType: rc.MIMEType, Filename: uriName(rc.URI), Metadata: map[string]any{"mcp.uri": rc.URI}}
		if rc.Blob != nil {
			p.Raw = rc.Blob
			if p.MediaType == "" {
				p.MediaType = "application/octet-stream"
			}
		} else {
			p.Raw = []byte(rc.Text)
			if p.MediaType == "" {
				p.MediaType = "text/plain"
			}
		}
		return p, nil
	case *sdk.ResourceLink:
		p := task.Part{Kind: task.PartURL, URL: c.URI, Filename: c.Name, MediaType: c.MIMEType}
		meta := map[string]any{}
		if c.Title != "" {
			meta["mcp.title"] = c.Title
		}
		if c.Description != "" {
			meta["mcp.description"] = c.Description
		}
		if c.Size != nil {
			meta["mcp.size"] = *c.Size
		}
		if len(meta) > 0 {
			p.Metadata = meta
		}
		return p, nil
	}
	// Content kinds a tool result should not hold: kept as their JSON.
	raw, err := c.MarshalJSON()
	if err != nil {
		return task.Part{}, fmt.Errorf("encode %T content: %w", c, err)
	}
	return task.DataPart(raw), nil
}

// uriName is the last path element of a resource URI, "" if it has none.
func uriName(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	p := u.Path
	if p == "" {
		p = u.Opaque
	}
	name := path.Base(p)
	if name == "." || name == "/" {
		return ""
	}
	return name
}

// contentText joins the text content items with newlines.
func contentText(content []sdk.Content) string {
	var texts []string
	for _, c := range content {
		if t, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// progressSink turns the progress notifications of one call into chunks
// of the "progress" artifact, one line each. Notifications arrive on the
// goroutines that read from the server; finish ends the artifact when the
// call is over, and later notifications are dropped.
type progressSink struct {
	stream *answer.Stream
	id     string

	mu     sync.Mutex
	lines  strings.Builder
	n      int
	last   float64 // the progress of the latest notification
	done   bool
	failed bool // an emit failed: the attempt is ending
}

func newProgressSink(emit task.Emit) *progressSink {
	id := answer.NewID()
	return &progressSink{stream: answer.NewStream(emit, id, progressName), id: id}
}

func (p *progressSink) add(n *sdk.ProgressNotificationParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Progress increases with every notification, so a repeat (the SDK's
	// delivery of one a progressTap already handed over) is not news.
	if p.done || p.failed || (p.n > 0 && n.Progress <= p.last) {
		return
	}
	p.last = n.Progress
	line := progressLine(n)
	p.lines.WriteString(line)
	p.n++
	if err := p.stream.Write(line); err != nil {
		p.failed = true
	}
}

// finish closes the streamed artifact and returns it whole, nil when no
// notification arrived. A nil sink returns nil.
func (p *progressSink) finish() (*task.Artifact, error) {
	if p == nil {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if p.n == 0 {
		return nil, nil
	}
	if !p.failed {
		if err := p.stream.Close(); err != nil {
			return nil, err
		}
	}
	return &task.Artifact{ID: p.id, Name: progressName, Parts: []task.Part{task.TextPart(p.lines.String())}}, nil
}

// progressLine formats a notification: "progress/total: message".
func progressLine(n *sdk.ProgressNotificationParams) string {
	s := strconv.FormatFloat(n.Progress, 'f', -1, 64)
	if n.Total > 0 {
		s += "/" + strconv.FormatFloat(n.Total, 'f', -1, 64)
	}
	if n.Message != "" {
		s += ": " + n.Message
	}
	return s + "\n"
}
