// Command fanout measures SubscribeToTask fan-out on one pactum node
// (issue 15): it starts `pactum serve` on loopback (SQLite, an exec agent
// whose tasks wait for a trigger, then stream lines of output), submits
// -tasks tasks, opens -streams concurrent SubscribeToTask SSE streams
// (JSON-RPC, or HTTP+JSON with -binding rest) spread evenly over them,
// reads the server's memory with every stream open, releases the tasks
// and checks that each stream received every event of its task, in order: the same events as every other
// stream of that task, artifact text equal to what the task stored, and
// the task's final state.
//
//	go build -o /tmp/pactum ./cmd/pactum
//	go run ./bench/fanout -pactum /tmp/pactum -streams 10000 -tasks 100
//
// Memory is read from /proc/<pid>/status (VmRSS, VmHWM) of the server and
// of this client: idle (server started), with the tasks running and no
// stream open, and with every stream open; per stream is the growth from
// "tasks running" to "streams open" divided by the streams. The run is
// bounded by -timeout and stops the server (SIGTERM, then SIGKILL) and
// removes its files whatever happens. Exit status 0 means every stream
// received every event.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

type options struct {
	pactum  string
	streams int
	tasks   int
	lines   int
	gap     time.Duration
	grace   time.Duration
	dial    int
	timeout time.Duration
	keep    bool
	hold    time.Duration
	binding string
}

func run() error {
	var o options
	flag.StringVar(&o.pactum, "pactum", "", "pactum binary to start (required)")
	flag.IntVar(&o.streams, "streams", 10000, "concurrent SubscribeToTask streams")
	flag.IntVar(&o.tasks, "tasks", 100, "tasks the streams are spread over")
	flag.IntVar(&o.lines, "lines", 5, "lines (artifact chunks) each task streams once released")
	flag.DurationVar(&o.gap, "gap", 100*time.Millisecond, "pause between a task's lines")
	flag.DurationVar(&o.grace, "kill-grace", 0, "the exec agent's kill_grace (0: its default, 5s); a short one, with -gap 0, makes a runtime that cuts the output short at the command's exit lose lines")
	flag.IntVar(&o.dial, "dial", 128, "streams being opened at once")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "hard limit on the whole run")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (config, database, server log)")
	flag.DurationVar(&o.hold, "hold", 0, "keep every stream open this long before releasing the tasks (to inspect the server)")
	flag.StringVar(&o.binding, "binding", "jsonrpc", "the A2A 1.0 binding the streams use: jsonrpc (POST SubscribeToTask) or rest (GET …/tasks/{id}:subscribe)")
	flag.Parse()
	if o.pactum == "" {
		return errors.New("-pactum is required (go build -o /tmp/pactum ./cmd/pactum)")
	}
	if o.binding != "jsonrpc" && o.binding != "rest" {
		return fmt.Errorf("-binding %q: want jsonrpc or rest", o.binding)
	}
	if o.tasks <= 0 || o.streams < o.tasks || o.lines <= 0 {
		return errors.New("need -tasks > 0, -streams >= -tasks and -lines > 0")
	}
	if err := raiseNoFile(o.streams); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	// SIGINT and SIGTERM end the run as the timeout does: the server is
	// stopped and the work directory removed.
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	work, err := os.MkdirTemp("", "pactum-fanout-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(work)
	} else {
		fmt.Println("work directory:", work)
	}
	srv, err := startServer(ctx, o, work)
	if err != nil {
		return err
	}
	defer srv.stop()
	return measure(ctx, o, srv)
}

// raiseNoFile sets the soft limit on open files to the hard one (the
// server, started after, inherits it) and checks it leaves room for the
// streams.
func raiseNoFile(streams int) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	l.Cur = l.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("setrlimit: %w", err)
	}
	if need := uint64(streams) + 512; l.Cur < need {
		return fmt.Errorf("open files limit %d is below the %d that %d streams need (raise ulimit -Hn)", l.Cur, need, streams)
	}
	return nil
}

// agentScript waits for the trigger file, then writes $2 lines, $3
// seconds apart.
const agentScript = `#!/bin/sh
while [ ! -e "$1" ]; do sleep 0.5; done
i=1
while [ "$i" -le "$2" ]; do
	echo "line $i"
	i=$((i + 1))
	if [ "$i" -le "$2" ]; then sleep "$3"; fi
done
exit 0
`

type server struct {
	cmd     *exec.Cmd
	url     string
	trigger string
	done    chan error
}

func startServer(ctx context.Context, o options, work string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	script := filepath.Join(work, "agent.sh")
	if err := os.WriteFile(script, []byte(agentScript), 0o755); err != nil {
		return nil, err
	}
	trigger := filepath.Join(work, "go")
	cfg := fmt.Sprintf(`listen: %s
store: sqlite://%s
workers: %d
http:
  max_connections: %d
log:
  level: error
agents:
  - name: lines
    type: exec
    timeout: 10m
    exec:
      command: [sh, %q, %q, "%d", "%s"]
      input: none
      stream: true
`, addr, filepath.Join(work, "fanout.db"), o.tasks+16, o.streams+256, script, trigger, o.lines, strconv.FormatFloat(o.gap.Seconds(), 'f', 3, 64))
	if o.grace > 0 {
		cfg += fmt.Sprintf("      kill_grace: %s\n", o.grace)
	}
	cfgPath := filepath.Join(work, "pactum.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(work, "pactum.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.pactum, "serve", "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", o.pactum, err)
	}
	s := &server{cmd: cmd, url: "http://" + addr + "/agents/lines", trigger: trigger, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait(); logf.Close() }()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case err := <-s.done:
			s.done <- err
			log, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("pactum serve exited (%v): %s", err, log)
		case <-ctx.Done():
			s.stop()
			return nil, fmt.Errorf("pactum serve did not listen on %s: %w", addr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop ends the server: SIGTERM, then SIGKILL after 20 s.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// mem is one reading of a process's memory, in KiB.
type mem struct{ rss, hwm int64 }

func readMem(pid string) (mem, error) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return mem{}, err
	}
	var m mem
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = n
		case "VmHWM:":
			m.hwm = n
		}
	}
	return m, nil
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

// stream is what one SubscribeToTask stream received.
type stream struct {
	task   string
	events [][]byte // each event's result, as sent
	err    error
}

func measure(ctx context.Context, o options, srv *server) error {
	pid := strconv.Itoa(srv.cmd.Process.Pid)
	tr := &http.Transport{MaxIdleConnsPerHost: o.dial, DisableCompression: true}
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()

	time.Sleep(time.Second)
	idle, err := readMem(pid)
	if err != nil {
		return err
	}
	ids := make([]string, o.tasks)
	for i := range ids {
		res, err := call(ctx, hc, srv.url, "SendMessage", map[string]any{
			"message":       map[string]any{"messageId": fmt.Sprintf("fanout-%d-%d", time.Now().UnixNano(), i), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "go"}}},
			"configuration": map[string]any{"returnImmediately": true},
		})
		if err != nil {
			return fmt.Errorf("submit task %d: %w", i, err)
		}
		var r struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		}
		if err := json.Unmarshal(res, &r); err != nil || r.Task.ID == "" {
			return fmt.Errorf("submit task %d: answer %s", i, res)
		}
		ids[i] = r.Task.ID
	}
	for _, id := range ids {
		if err := waitState(ctx, hc, srv.url, id, "TASK_STATE_WORKING"); err != nil {
			return err
		}
	}
	time.Sleep(time.Second)
	running, err := readMem(pid)
	if err != nil {
		return err
	}

	// Open the streams, -dial at a time; each is open once its first
	// event (the task) arrived.
	// sctx ends the streams early when some could not be opened.
	sctx, closeStreams := context.WithCancel(ctx)
	defer closeStreams()
	streams := make([]*stream, o.streams)
	var opened, failedOpen, settled atomic.Int64
	allOpen := make(chan struct{})
	var wg sync.WaitGroup
	sem := make(chan struct{}, o.dial)
	t0 := time.Now()
	for i := range streams {
		s := &stream{task: ids[i%len(ids)]}
		streams[i] = s
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return fmt.Errorf("opening streams (%d open): %w", opened.Load(), ctx.Err())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			released := false
			// release frees the dial slot and counts the stream as open
			// (or failed), once.
			release := func() {
				if released {
					return
				}
				released = true
				<-sem
				if settled.Add(1) == int64(o.streams) {
					close(allOpen)
				}
			}
			s.err = subscribe(sctx, hc, srv.url, o.binding == "rest", i, s, func() { opened.Add(1); release() })
			if !released {
				failedOpen.Add(1)
				release()
			}
		}()
	}
	select {
	case <-allOpen:
	case <-ctx.Done():
		return fmt.Errorf("opening streams (%d open): %w", opened.Load(), ctx.Err())
	}
	openTook := time.Since(t0)
	if f := failedOpen.Load(); f > 0 {
		// The tasks stay blocked: close the open streams, then report.
		closeStreams()
		wg.Wait()
		for _, s := range streams {
			if s.err != nil {
				return fmt.Errorf("%d of %d streams did not open; first error: %w", f, o.streams, s.err)
			}
		}
	}
	time.Sleep(2 * time.Second)
	if o.hold > 0 {
		fmt.Printf("every stream is open; server pid %s; holding for %s\n", pid, o.hold)
		select {
		case <-time.After(o.hold):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	open, err := readMem(pid)
	if err != nil {
		return err
	}
	self, _ := readMem("self")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)

	// Release the tasks and wait for every stream to end.
	t1 := time.Now()
	if err := os.WriteFile(srv.trigger, nil, 0o644); err != nil {
		return err
	}
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the streams to end: %w", ctx.Err())
	}
	drainTook := time.Since(t1)
	final, err := readMem(pid)
	if err != nil {
		return err
	}
	selfEnd, _ := readMem("self")

	bad, short, err := verify(ctx, hc, srv.url, ids, streams, o.lines)
	if err != nil {
		return err
	}
	events := 0
	for _, s := range streams {
		events += len(s.events)
	}
	per := float64(open.rss-running.rss) / float64(o.streams)
	fmt.Printf("fanout: %d streams over %d tasks, %d lines each, %d events received (%.1f per stream)\n",
		o.streams, o.tasks, o.lines, events, float64(events)/float64(o.streams))
	fmt.Printf("opened in %s (%.0f streams/s); released tasks ended and every stream closed in %s\n",
		openTook.Round(time.Millisecond), float64(o.streams)/openTook.Seconds(), drainTook.Round(time.Millisecond))
	fmt.Printf("server RSS: idle %s, tasks running %s, %d streams open %s, after %s; VmHWM %s\n",
		mib(idle.rss), mib(running.rss), o.streams, mib(open.rss), mib(final.rss), mib(final.hwm))
	fmt.Printf("server memory per stream: %.1f KiB ((open - tasks running) / streams); %.1f KiB from idle\n",
		per, float64(open.rss-idle.rss)/float64(o.streams))
	fmt.Printf("client RSS: %s with the streams open, VmHWM %s (Go heap in use %s, %d goroutines)\n",
		mib(self.rss), mib(selfEnd.hwm), mib(int64(ms.HeapInuse/1024)), runtime.NumGoroutine())
	if bad > 0 {
		return fmt.Errorf("%d of %d streams did not receive every event of their task", bad, o.streams)
	}
	if short > 0 {
		return fmt.Errorf("%d of %d tasks stored fewer than the %d lines their agent writes", short, o.tasks, o.lines)
	}
	fmt.Printf("every stream received every event of its task, in order (checked against the stored tasks)\n")
	return nil
}

// call makes one JSON-RPC call and returns its result.
func call(ctx context.Context, hc *http.Client, url, method string, params any) (json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d %s", method, resp.StatusCode, b)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%s: %s", method, r.Error)
	}
	return r.Result, nil
}

type wireTask struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Artifacts []wireArtifact `json:"artifacts"`
}

type wireArtifact struct {
	ID    string `json:"artifactId"`
	Parts []struct {
		Text string `json:"text"`
	} `json:"parts"`
}

func (a wireArtifact) text() string {
	var b strings.Builder
	for _, p := range a.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func getTask(ctx context.Context, hc *http.Client, url, id string) (*wireTask, error) {
	res, err := call(ctx, hc, url, "GetTask", map[string]any{"id": id, "historyLength": 0})
	if err != nil {
		return nil, err
	}
	var t wireTask
	if err := json.Unmarshal(res, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

func waitState(ctx context.Context, hc *http.Client, url, id, state string) error {
	for {
		t, err := getTask(ctx, hc, url, id)
		if err != nil {
			return fmt.Errorf("task %s: %w", id, err)
		}
		if t.Status.State == state {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("task %s is %s, waited for %s: %w", id, t.Status.State, state, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// subscribe opens stream i on s.task, by JSON-RPC or (rest) HTTP+JSON,
// and records each event's result until the server ends the stream;
// opened is called on the first event.
func subscribe(ctx context.Context, hc *http.Client, url string, rest bool, i int, s *stream, opened func()) error {
	method, body := http.MethodPost, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SubscribeToTask","params":{"id":%q}}`, i, s.task)
	if rest {
		method, url, body = http.MethodGet, url+"/tasks/"+s.task+":subscribe", ""
	}
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	if !rest {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("stream %d: HTTP %d %s", i, resp.StatusCode, b)
	}
	r := bufio.NewReaderSize(resp.Body, 4096)
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: read the rest of it.
			rest, err2 := r.ReadBytes('\n')
			line, err = append(slices.Clone(line), rest...), err2
		}
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			var msg struct {
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if jerr := json.Unmarshal(bytes.TrimSpace(data), &msg); jerr != nil {
				return fmt.Errorf("stream %d: event %q: %w", i, data, jerr)
			}
			if msg.Error != nil {
				return fmt.Errorf("stream %d: error event %s", i, msg.Error)
			}
			if rest {
				// An HTTP+JSON event is the result itself.
				msg.Result = json.RawMessage(bytes.TrimSpace(slices.Clone(data)))
			}
			s.events = append(s.events, msg.Result)
			if len(s.events) == 1 {
				opened()
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("stream %d: %w", i, err)
		}
	}
}

// verify checks every stream against its stored task and the other
// streams of the task, and returns how many failed (printing the first
// few failures) and how many tasks stored fewer lines than their agent
// wrote.
func verify(ctx context.Context, hc *http.Client, url string, ids []string, streams []*stream, lines int) (bad, short int, err error) {
	stored := map[string]*wireTask{}
	for _, id := range ids {
		t, err := getTask(ctx, hc, url, id)
		if err != nil {
			return 0, 0, fmt.Errorf("read task %s after the run: %w", id, err)
		}
		if t.Status.State != "TASK_STATE_COMPLETED" {
			return 0, 0, fmt.Errorf("task %s ended %s", id, t.Status.State)
		}
		stored[id] = t
	}
	// The agent's own output: each of its lines stored. Not a property
	// of the streams (they are checked against what was stored), so a
	// task short of lines is counted apart; it fails the run all the same
	// (the exec runtime lost output: it once cut the output short at the
	// command's exit).
	var want strings.Builder
	for n := 1; n <= lines; n++ {
		fmt.Fprintf(&want, "line %d\n", n)
	}
	for _, t := range stored {
		if len(t.Artifacts) != 1 || t.Artifacts[0].text() != strings.TrimRight(want.String(), "\n") {
			if short == 0 {
				fmt.Fprintf(os.Stderr, "task %s stored %+v, not the agent's %d lines\n", t.ID, t.Artifacts, lines)
			}
			short++
		}
	}
	if short > 0 {
		fmt.Printf("%d of %d tasks stored fewer than the %d lines their agent writes (exec agent, not streaming)\n", short, len(stored), lines)
	}
	reference := map[string][][]byte{}
	fail := func(i int, format string, args ...any) {
		if bad < 5 {
			fmt.Fprintf(os.Stderr, "stream %d: %s\n", i, fmt.Sprintf(format, args...))
		}
		bad++
	}
	for i, s := range streams {
		if s.err != nil {
			fail(i, "%v", s.err)
			continue
		}
		if err := checkStream(s, stored[s.task]); err != nil {
			fail(i, "task %s: %v", s.task, err)
			continue
		}
		// Every stream of a task carries the same events.
		ref, ok := reference[s.task]
		if !ok {
			reference[s.task] = s.events
			continue
		}
		if len(ref) != len(s.events) {
			fail(i, "task %s: %d events, another stream of it %d", s.task, len(s.events), len(ref))
			continue
		}
		for k := range ref {
			if !bytes.Equal(ref[k], s.events[k]) {
				fail(i, "task %s: event %d differs from another stream's: %s / %s", s.task, k, s.events[k], ref[k])
				break
			}
		}
	}
	return bad, short, nil
}

// checkStream checks one stream's events: the task first, then artifact
// chunks whose text adds up to the stored artifacts, then the final
// status, last.
func checkStream(s *stream, t *wireTask) error {
	var first struct {
		Task *wireTask `json:"task"`
	}
	if err := json.Unmarshal(s.events[0], &first); err != nil || first.Task == nil || first.Task.ID != t.ID {
		return fmt.Errorf("first event is not the task: %s", s.events[0])
	}
	got := map[string]string{}
	var order []string
	final := ""
	for k, raw := range s.events[1:] {
		var ev struct {
			ArtifactUpdate *struct {
				Artifact wireArtifact `json:"artifact"`
				Append   bool         `json:"append"`
			} `json:"artifactUpdate"`
			StatusUpdate *struct {
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"statusUpdate"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("event %d: %w", k+1, err)
		}
		if final != "" {
			return fmt.Errorf("event %d after the final status: %s", k+1, raw)
		}
		switch {
		case ev.ArtifactUpdate != nil:
			a := ev.ArtifactUpdate.Artifact
			if _, seen := got[a.ID]; !seen {
				order = append(order, a.ID)
			}
			if ev.ArtifactUpdate.Append {
				got[a.ID] += a.text()
			} else {
				got[a.ID] = a.text()
			}
		case ev.StatusUpdate != nil:
			if st := ev.StatusUpdate.Status.State; st == "TASK_STATE_COMPLETED" || st == "TASK_STATE_FAILED" || st == "TASK_STATE_CANCELED" {
				final = st
			}
		}
	}
	if final != t.Status.State {
		return fmt.Errorf("final status %q, stored %q", final, t.Status.State)
	}
	if len(order) != len(t.Artifacts) {
		return fmt.Errorf("streamed artifacts %v, stored %d", order, len(t.Artifacts))
	}
	for _, a := range t.Artifacts {
		// The stored answer is the command's output without its last
		// newline.
		if strings.TrimRight(got[a.ID], "\n") != a.text() {
			return fmt.Errorf("artifact %s streamed %q, stored %q", a.ID, got[a.ID], a.text())
		}
	}
	return nil
}
