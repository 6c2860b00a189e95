package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/internal/node"
	"github.com/spf13/cobra"
)

// sendOptions are the flags of `pactum send`.
type sendOptions struct {
	asJSON    bool
	noStream  bool
	contextID string
	taskID    string
	actor     string
	idemKey   string
	policyRef string
	approval  string
	matter    string
	resource  string
	headers   []string
	cardPath  string
	returnNow bool
	token     string
	data      string // --data: JSON sent as a data part
	file      string // --file: a file sent as a file part
	// negotiation, when set, is the accepted negotiation the task cites
	// (request metadata pactum.negotiation): the task is checked against
	// exactly the contract accepted there.
	negotiation string
}

func newSendCmd() *cobra.Command {
	var o sendOptions
	cmd := &cobra.Command{
		Use:   `send URL ["text"] [--data JSON] [--file PATH]`,
		Short: "Send a message to any A2A agent and print the answer as it streams",
		Long: `Send a message to any A2A agent (pactum or not), discovered from its card at
URL/.well-known/agent-card.json. Output streams live when the agent supports
streaming. The answer (artifacts, streamed chunks) is printed once on stdout;
the task id and its state changes go to stderr, so that
'pactum send URL text > answer.txt' keeps only the answer. With --json every
event is printed as one JSON line on stdout.

The message is the text, then a data part with --data JSON (an mcp tool
agent takes its arguments from it: --data '{"a":2,"b":3}'), then a file
part with --file PATH (its bytes, name and media type). The text may be
left out when --data or --file is given.

Exit status: 0 when the task completed or waits for input, 1 when it failed,
was rejected or canceled, or the stream ended before the task did, 130 when
interrupted (Ctrl-C): the task goes on, and 'pactum tasks watch ID' follows
it again.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (o.data != "" || o.file != "") {
				return nil
			}
			if len(args) == 1 {
				return errors.New(`send needs the text to send: pactum send URL "text" (or a part with --data JSON or --file PATH)`)
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			parts, err := messageParts(args[1:], o)
			if err != nil {
				return err
			}
			return runSend(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], parts, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.asJSON, "json", false, "print each event as a JSON line")
	f.BoolVar(&o.noStream, "no-stream", false, "use blocking SendMessage even if the agent streams")
	f.BoolVar(&o.returnNow, "no-wait", false, "return as soon as the task is created (non-streaming)")
	f.StringVar(&o.contextID, "context", "", "continue this context")
	f.StringVar(&o.taskID, "task", "", "continue this task (answer an input-required question)")
	f.StringVar(&o.actor, "actor", "", "pactum envelope: actor")
	f.StringVar(&o.idemKey, "idempotency-key", "", "pactum envelope: idempotency key")
	f.StringVar(&o.policyRef, "policy", "", "pactum envelope: policy reference")
	f.StringVar(&o.approval, "approval", "", "pactum envelope: approval reference")
	f.StringVar(&o.matter, "matter", "", "pactum envelope: matter")
	f.StringVar(&o.resource, "resource", "", "pactum envelope: resource")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "extra HTTP header for card discovery, Name: value")
	f.StringVar(&o.cardPath, "card-path", "", "card path (default /.well-known/agent-card.json)")
	f.StringVar(&o.token, "token", "", "bearer token for a server with auth: bearer (default $PACTUM_TOKEN)")
	f.StringVar(&o.data, "data", "", `JSON value sent as a data part after the text, e.g. '{"a":2,"b":3}' (an mcp tool agent's arguments)`)
	f.StringVar(&o.file, "file", "", "file sent as a file part after the text and the data (its bytes, name and media type)")
	f.StringVar(&o.negotiation, "negotiation", "", "cite this accepted negotiation (pactum contract negotiate): the task is checked against exactly its contract")
	return cmd
}

// maxFileBytes bounds a file sent with --file: the part travels inside one
// JSON-RPC message, base64-encoded.
const maxFileBytes = 8 << 20

// messageParts builds the parts of the message send sends: the text (when
// given and not empty), the --data part, the --file part.
func messageParts(text []string, o sendOptions) ([]*a2a.Part, error) {
	var parts []*a2a.Part
	if len(text) > 0 && text[0] != "" {
		parts = append(parts, a2a.NewTextPart(text[0]))
	}
	if o.data != "" {
		var v any
		dec := json.NewDecoder(strings.NewReader(o.data))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("--data is not JSON: %w", err)
		}
		if dec.More() {
			return nil, errors.New("--data is not JSON: more than one value")
		}
		parts = append(parts, a2a.NewDataPart(v))
	}
	if o.file != "" {
		fi, err := os.Stat(o.file)
		if err != nil {
			return nil, fileError(o.file, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("--file %s: not a regular file", o.file)
		}
		if fi.Size() > maxFileBytes {
			return nil, fmt.Errorf("--file %s: %d bytes, more than the %d a message carries", o.file, fi.Size(), maxFileBytes)
		}
		b, err := os.ReadFile(o.file)
		if err != nil {
			return nil, fileError(o.file, err)
		}
		p := a2a.NewRawPart(b)
		p.Filename = filepath.Base(o.file)
		p.MediaType = mediaType(o.file, b)
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return nil, errors.New("nothing to send: the text is empty and there is no --data or --file")
	}
	return parts, nil
}

// fileError says why --file path cannot be sent, naming the path once.
func fileError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("--file %s: %w", path, err)
}

// mediaType is the media type of a file sent with --file: by its
// extension, else by its first bytes.
func mediaType(path string, b []byte) string {
	if t := mime.TypeByExtension(filepath.Ext(path)); t != "" {
		return t
	}
	return http.DetectContentType(b)
}

func runSend(ctx context.Context, out, errw io.Writer, url string, parts []*a2a.Part, o sendOptions) error {
	var ropts []agentcard.ResolveOption
	for _, h := range o.headers {
		name, val, ok := strings.Cut(h, ":")
		if !ok {
			return fmt.Errorf("--header %q: want Name: value", h)
		}
		ropts = append(ropts, agentcard.WithRequestHeader(strings.TrimSpace(name), strings.TrimSpace(val)))
	}
	if o.cardPath != "" {
		ropts = append(ropts, agentcard.WithPath(o.cardPath))
	}
	card, err := agentcard.DefaultResolver.Resolve(ctx, strings.TrimRight(url, "/"), ropts...)
	if err != nil {
		return fmt.Errorf("discover agent card at %s: %w", url, err)
	}
	var copts []a2aclient.FactoryOption
	if token := cmp.Or(o.token, os.Getenv("PACTUM_TOKEN")); token != "" {
		hc := &http.Client{Transport: bearer.Transport{Token: token}}
		copts = append(copts, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
	}
	client, err := a2aclient.NewFromCard(ctx, card, copts...)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", card.Name, err)
	}
	defer client.Destroy()

	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	msg.ContextID = o.contextID
	msg.TaskID = a2a.TaskID(o.taskID)
	env := map[string]any{}
	for k, v := range map[string]string{
		"actor": o.actor, "idempotencyKey": o.idemKey, "policyRef": o.policyRef,
		"approvalRef": o.approval, "matter": o.matter, "resource": o.resource,
	} {
		if v != "" {
			env[k] = v
		}
	}
	if len(env) > 0 {
		msg.Metadata = map[string]any{"pactum": env}
	}
	req := &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: o.returnNow}}
	if o.negotiation != "" {
		req.Metadata = map[string]any{node.CiteKey: o.negotiation}
	}

	p := &printer{out: out, err: errw, json: o.asJSON}
	if card.Capabilities.Streaming && !o.noStream && !o.returnNow {
		for ev, err := range client.SendStreamingMessage(ctx, req) {
			if err != nil {
				if ctx.Err() != nil {
					return p.interrupted(ctx)
				}
				return fmt.Errorf("stream: %w", authHint(err, o.token))
			}
			if err := p.event(ev); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return p.interrupted(ctx)
		}
		if !p.final.Terminal() && !interrupted(p.final) {
			return p.unfinished()
		}
		return p.done()
	}
	res, err := client.SendMessage(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return p.interrupted(ctx)
		}
		return fmt.Errorf("send: %w", authHint(err, o.token))
	}
	if err := p.event(res); err != nil {
		return err
	}
	return p.done()
}

// interrupted reports whether s is a state in which a task waits for its
// caller (input or authentication): a stream may end there.
func interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// exitInterrupted is the exit status of a command interrupted by Ctrl-C
// (128 + SIGINT), as shells report it.
const exitInterrupted = 130

// printer renders A2A events for a terminal or as JSON lines. The answer
// (artifacts, a final message) goes to out exactly once; what is said about
// the task (its id, its state changes) goes to err.
type printer struct {
	out     io.Writer
	err     io.Writer
	json    bool
	printed map[a2a.ArtifactID]bool // artifacts already on out
	answer  bool                    // something of the answer is on out
	midLine bool                    // streamed text not yet ended by a newline
	shown   a2a.TaskState           // the last state said on err
	final   a2a.TaskState
	taskID  a2a.TaskID
	reason  string
}

func (p *printer) event(ev a2a.Event) error {
	if p.json {
		b, err := json.Marshal(a2a.StreamResponse{Event: ev})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(p.out, string(b))
		p.track(ev)
		return err
	}
	if p.printed == nil {
		p.printed = map[a2a.ArtifactID]bool{}
	}
	switch v := ev.(type) {
	case *a2a.Task:
		if p.taskID == "" {
			fmt.Fprintf(p.err, "task %s (%s)\n", v.ID, v.Status.State)
			p.shown = v.Status.State
		}
		for _, a := range v.Artifacts {
			if !p.printed[a.ID] {
				p.printed[a.ID] = true
				p.sayParts(a.Parts)
				p.endLine()
			}
		}
		p.status(v.Status)
	case *a2a.TaskArtifactUpdateEvent:
		p.printed[v.Artifact.ID] = true
		p.sayParts(v.Artifact.Parts)
		if v.LastChunk {
			p.endLine()
		}
	case *a2a.TaskStatusUpdateEvent:
		p.status(v.Status)
	case *a2a.Message:
		p.sayParts(v.Parts)
		p.endLine()
	}
	p.track(ev)
	return nil
}

// say writes part of the answer to out.
func (p *printer) say(text string) {
	if text == "" {
		return
	}
	fmt.Fprint(p.out, text)
	p.answer = true
	p.midLine = !strings.HasSuffix(text, "\n")
}

// sayParts writes parts of the answer to out: text as it streams, and
// each other part (data as compact JSON, a URL, a file's size) on a line
// of its own, so that a data part is never glued to the text before it.
func (p *printer) sayParts(parts a2a.ContentParts) {
	for _, part := range parts {
		if _, text := part.Content.(a2a.Text); text {
			p.say(partString(part))
			continue
		}
		p.endLine()
		p.say(partString(part))
		p.endLine()
	}
}

// endLine ends a streamed line of the answer.
func (p *printer) endLine() {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
}

// status says a change of the task's state on err. The message of a
// completed task is its answer when no artifact carried one, and is then
// printed on out; otherwise (the answer's text again, or a status) it
// joins the state line.
func (p *printer) status(st a2a.TaskStatus) {
	msg := ""
	if st.Message != nil {
		msg = partsString(st.Message.Parts)
	}
	if st.State == a2a.TaskStateCompleted && !p.answer && msg != "" {
		p.endLine()
		p.sayParts(st.Message.Parts)
		p.endLine()
		msg = ""
	}
	if failedState(st.State) {
		// done's error says it, with the reason, once.
		p.shown = st.State
		p.endLine()
		return
	}
	if st.State == a2a.TaskStateCompleted && p.answer {
		msg = "" // the answer's text again, or said on out just now
	}
	if st.State == p.shown && msg == "" {
		return
	}
	p.shown = st.State
	p.endLine()
	if msg != "" {
		msg = ": " + msg
	}
	fmt.Fprintf(p.err, "→ %s%s\n", st.State, msg)
}

func (p *printer) track(ev a2a.Event) {
	switch v := ev.(type) {
	case *a2a.Task:
		p.taskID, p.final = v.ID, v.Status.State
		if v.Status.Message != nil {
			p.reason = partsString(v.Status.Message.Parts)
		}
	case *a2a.TaskStatusUpdateEvent:
		p.taskID, p.final = v.TaskID, v.Status.State
		if v.Status.Message != nil {
			p.reason = partsString(v.Status.Message.Parts)
		}
	case *a2a.Message:
		p.final = a2a.TaskStateCompleted
	}
}

// failedState reports whether s ends a task without its answer.
func failedState(s a2a.TaskState) bool {
	return s == a2a.TaskStateFailed || s == a2a.TaskStateRejected || s == a2a.TaskStateCanceled
}

// done turns a failed, rejected or canceled task into a non-zero exit. Its
// error is the one line that says how the task ended and why: status does
// not say it on err before.
func (p *printer) done() error {
	if failedState(p.final) {
		if p.reason == "" {
			return fmt.Errorf("task %s ended %s", p.taskID, p.final)
		}
		return fmt.Errorf("task %s ended %s: %s", p.taskID, p.final, p.reason)
	}
	return nil
}

// unfinished is the error of a stream that ended before its task did.
func (p *printer) unfinished() error {
	if !p.json {
		p.endLine()
	}
	if p.taskID == "" {
		return errors.New("the stream ended without a task or an answer")
	}
	return fmt.Errorf("the stream ended while task %s was %s; it may go on: %s", p.taskID, cmp.Or(p.final, a2a.TaskStateUnspecified), p.followHint())
}

// interrupted is the error of a send the user interrupted (Ctrl-C): the
// task goes on without the client, so it says how to find it again.
func (p *printer) interrupted(ctx context.Context) error {
	if !p.json {
		p.endLine()
	}
	if p.taskID == "" || p.final.Terminal() {
		return &exitErr{code: exitInterrupted, err: fmt.Errorf("interrupted: %w", context.Cause(ctx))}
	}
	return &exitErr{code: exitInterrupted, err: fmt.Errorf("interrupted; task %s goes on: %s", p.taskID, p.followHint())}
}

// followHint says how to follow or cancel the task from another command.
func (p *printer) followHint() string {
	return fmt.Sprintf("follow it with 'pactum tasks watch %s', cancel it with 'pactum tasks cancel %s' (both against the server's store)", p.taskID, p.taskID)
}

// partsString renders parts on one string as sayParts prints them: a
// part that is not text on a line of its own.
func partsString(parts a2a.ContentParts) string {
	var b strings.Builder
	for i, part := range parts {
		_, text := part.Content.(a2a.Text)
		if i > 0 && (!text || !prevText(parts[i-1])) && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(partString(part))
	}
	return b.String()
}

func prevText(p *a2a.Part) bool {
	_, ok := p.Content.(a2a.Text)
	return ok
}

// partString renders one part: text as it is, data as compact JSON, a URL
// as itself, raw bytes by their size, type and name.
func partString(part *a2a.Part) string {
	switch c := part.Content.(type) {
	case a2a.Text:
		return string(c)
	case a2a.Data:
		j, _ := json.Marshal(c.Value)
		return string(j)
	case a2a.URL:
		return string(c)
	case a2a.Raw:
		s := fmt.Sprintf("<%d bytes", len(c))
		if part.MediaType != "" {
			s += " " + part.MediaType
		}
		if part.Filename != "" {
			s += " " + part.Filename
		}
		return s + ">"
	}
	return ""
}

// authHint adds to a refusal for lack of authentication what to do about
// it.
func authHint(err error, token string) error {
	if !errors.Is(err, a2a.ErrUnauthenticated) && !strings.Contains(err.Error(), "401") {
		return err
	}
	if token == "" && os.Getenv("PACTUM_TOKEN") == "" {
		return fmt.Errorf("%w (the server wants a bearer token: pass --token or set PACTUM_TOKEN)", err)
	}
	return fmt.Errorf("%w (the server did not accept the bearer token)", err)
}
