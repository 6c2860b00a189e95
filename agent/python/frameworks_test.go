package python

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/task"
)

// The frameworks themselves (LangGraph, LangChain, CrewAI) cannot be
// installed here: there is no PyPI. testdata/standins.py holds objects
// that stand in for them, implementing the methods and attributes the
// worker calls or looks for, with the real libraries' signatures; their
// answers say what they were given. The worker, its protocol and the
// interpreter are real.

// standin returns a runtime for standins:<attr>.
func standin(t *testing.T, attr string, adjust ...func(*Settings)) *Runtime {
	t.Helper()
	needPython(t)
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	s := Settings{Object: "standins:" + attr, Path: []string{dir}, Dir: t.TempDir()}
	for _, f := range adjust {
		f(&s)
	}
	r, err := New(s, WithName(t.Name()), WithRunDir(filepath.Join(t.TempDir(), "procs")), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// conversation is a request whose history has an earlier exchange.
func conversation(text string) *task.Request {
	req := agenttest.Request(text)
	req.History = append([]task.Message{
		{ID: "m0", Role: task.RoleUser, Parts: []task.Part{task.TextPart("hi")}},
		{ID: "a0", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("hello")}},
	}, req.Message)
	return req
}

func strptr(s string) *string { return &s }

func TestShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		attr      string
		adjust    func(*Settings)
		req       *task.Request
		framework string // detected
		want      string
		wantData  string // a data part instead of text
	}{
		{name: "langgraph messages in, last message out", attr: "graph", req: conversation("what now?"), framework: "langgraph",
			want: `{"n": 3, "roles": ["user", "assistant", "user"], "last": "what now?", "thread": "ctx-1"}`},
		{name: "langgraph with a checkpointer gets the new message only", attr: "remembering_graph", req: conversation("again"), framework: "langgraph",
			want: `{"n": 1, "roles": ["user"], "last": "again", "thread": "ctx-1"}`},
		{name: "langgraph output_key", attr: "graph", adjust: func(s *Settings) { s.OutputKey = "steps" }, req: agenttest.Request("x"), framework: "langgraph",
			want: "1"},
		{name: "langgraph data part is the state", attr: "graph", req: dataRequest(`{"messages":[{"role":"user","content":"from data"}]}`), framework: "langgraph",
			want: `{"n": 1, "roles": ["user"], "last": "from data", "thread": "ctx-1"}`},
		{name: "langchain input key", attr: "chain", req: agenttest.Request("why?"), framework: "langchain",
			want: `answer to {"input": "why?"}`},
		{name: "langchain custom input_key", attr: "chain", adjust: func(s *Settings) { s.InputKey = strptr("question") }, req: agenttest.Request("why?"), framework: "langchain",
			want: `answer to {"question": "why?"}`},
		{name: "langchain empty input_key passes the text", attr: "chain", adjust: func(s *Settings) { s.InputKey = strptr("") }, req: agenttest.Request("why?"), framework: "langchain",
			want: `answer to "why?"`},
		{name: "langchain dict output picks answer", attr: "rag_chain", adjust: func(s *Settings) { s.InputKey = strptr("question") }, req: agenttest.Request("q"), framework: "langchain",
			want: "from q"},
		{name: "langchain output_key", attr: "rag_chain", adjust: func(s *Settings) { s.InputKey = strptr("question"); s.OutputKey = "context" }, req: agenttest.Request("q"), framework: "langchain",
			wantData: `["doc1","doc2"]`},
		{name: "langchain invoke only runs in a thread", attr: "sync_chain", req: agenttest.Request("x"), framework: "langchain",
			want: "sync x"},
		{name: "crewai topic", attr: "crew", req: agenttest.Request("AI agents"), framework: "crewai",
			want: `crew got {"topic": "AI agents"}`},
		{name: "crewai custom input_key", attr: "crew", adjust: func(s *Settings) { s.InputKey = strptr("subject") }, req: agenttest.Request("AI agents"), framework: "crewai",
			want: `crew got {"subject": "AI agents"}`},
		{name: "crewai JSON text is the inputs", attr: "crew", req: agenttest.Request(`{"topic": "x", "year": 2026}`), framework: "crewai",
			want: `crew got {"topic": "x", "year": 2026}`},
		{name: "crewai data part is the inputs", attr: "crew", req: dataRequest(`{"a": 1}`), framework: "crewai",
			want: `crew got {"a": 1}`},
		{name: "crewai kickoff only runs in a thread", attr: "sync_crew", req: agenttest.Request("t"), framework: "crewai",
			want: `sync crew got {"topic": "t"}`},
		{name: "framework overrides detection", attr: "chain", adjust: func(s *Settings) { s.Framework = FrameworkLangGraph }, req: agenttest.Request("x"), framework: "langgraph",
			want: `answer to {"messages": [{"content": "x", "role": "user"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var adjust []func(*Settings)
			if tt.adjust != nil {
				adjust = append(adjust, tt.adjust)
			}
			r := standin(t, tt.attr, adjust...)
			res, err := r.Invoke(t.Context(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := workerFramework(r); got != tt.framework {
				t.Errorf("framework = %q, want %q", got, tt.framework)
			}
			p := res.Artifacts[0].Parts[0]
			if tt.wantData != "" {
				if p.Kind != task.PartData || string(p.Data) != tt.wantData {
					t.Errorf("part = %s %q %s, want data %s", p.Kind, p.Text, p.Data, tt.wantData)
				}
				return
			}
			if p.Kind != task.PartText || p.Text != tt.want {
				t.Errorf("answer = %s %q %s\nwant %q", p.Kind, p.Text, p.Data, tt.want)
			}
		})
	}
}

func workerFramework(r *Runtime) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return ""
	}
	return r.w.ready.Framework
}

func dataRequest(data string) *task.Request {
	req := agenttest.Request("")
	req.Message.Parts = []task.Part{task.DataPart([]byte(data))}
	req.History = []task.Message{req.Message}
	return req
}

// TestStreamingShapes: LangGraph's astream(stream_mode="values") states
// become the pieces each adds to the answer; LangChain's astream chunks
// are sent as they come.
func TestStreamingShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attr, chunks, result string
	}{
		{"graph", "Hel|lo| world", "Hello world"},
		{"chain", "to|k|ens", "tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.attr, func(t *testing.T) {
			t.Parallel()
			r := standin(t, tt.attr)
			var rec agenttest.Recorder
			res, err := r.Stream(t.Context(), agenttest.Request("x"), rec.Emit)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rec.Texts(), "|"); got != tt.chunks+"|" {
				t.Errorf("chunks = %q, want %q (and the closing empty one)", got, tt.chunks+"|")
			}
			agenttest.CheckChunks(t, rec.Chunks(), res)
			if got := agenttest.ResultText(t, res); got != tt.result {
				t.Errorf("result = %q, want %q", got, tt.result)
			}
		})
	}
}

// TestInputRequired: a LangGraph interrupt() and an InputRequired
// exception pause the task for input with the question; the reply resumes
// the graph's thread with Command(resume=…) (langgraph.types is a
// stand-in too) or reaches a callable as the next message.
func TestInputRequired(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attr, question, reply, want string
		stream                      bool
	}{
		{"interrupting_graph", "Which city?", "Oslo", "booked for Oslo in thread ctx-1", false},
		{"interrupting_graph", "Which city?", "Rome", "booked for Rome in thread ctx-1", true},
		{"asking_agent", `{"choices":["Oslo","Rome"],"question":"Which city?"}`, "Rome",
			`going to Rome after {"choices":["Oslo","Rome"],"question":"Which city?"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.attr, func(t *testing.T) {
			t.Parallel()
			r := standin(t, tt.attr)
			run := func(req *task.Request) *task.Result {
				t.Helper()
				var res *task.Result
				var err error
				if tt.stream {
					var rec agenttest.Recorder
					res, err = r.Stream(t.Context(), req, rec.Emit)
				} else {
					res, err = r.Invoke(t.Context(), req)
				}
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			req := agenttest.Request("book a trip")
			res := run(req)
			if !res.InputRequired || len(res.Artifacts) != 0 {
				t.Fatalf("result = %+v, want a question", res)
			}
			if got := task.Render(*res.Message); got != tt.question {
				t.Errorf("question = %q, want %q", got, tt.question)
			}
			// The core appends the question to the history, then the reply.
			q := *res.Message
			q.Role = task.RoleAgent
			reply := task.Message{ID: "msg-2", Role: task.RoleUser, Parts: []task.Part{task.TextPart(tt.reply)}}
			req2 := agenttest.Request(tt.reply)
			req2.Message = reply
			req2.History = []task.Message{req.Message, q, reply}
			res = run(req2)
			if res.InputRequired {
				t.Fatalf("the reply was asked again: %+v", res)
			}
			if got := agenttest.ResultText(t, res); got != tt.want {
				t.Errorf("answer = %q, want %q", got, tt.want)
			}
		})
	}
}
