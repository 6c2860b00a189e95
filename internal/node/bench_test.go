package node_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/jackc/pgx/v5"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
)

// startServer runs a real node on a loopback port over a SQLite file.
func startServer(tb testing.TB, yaml string) string {
	tb.Helper()
	return startServerOn(tb, "sqlite://"+filepath.Join(tb.TempDir(), "pactum.db"), yaml)
}

// startServerOn is startServer on the store dsn names.
func startServerOn(tb testing.TB, dsn, yaml string) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	src := fmt.Sprintf("listen: %s\nstore: %q\n%s", addr, dsn, yaml)
	cfg, err := config.Parse([]byte(src), "bench.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := node.New(ctx, cfg, ".", nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln, 10*time.Second) }()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
	return "http://" + addr
}

// benchEcho is the configuration the benchmarks run the echo agent with.
const benchEcho = "workers: 64\nlog: {level: error}\nagents:\n  - name: echo\n    type: echo\n"

// BenchmarkSendMessage measures blocking A2A SendMessage round trips
// (JSON-RPC over HTTP, A2A-Version 1.0) to the echo agent on the SQLite
// store: every request is a durable task with its records and audit
// entries. Run: go test -run x -bench SendMessage -benchtime 6000x ./internal/node
func BenchmarkSendMessage(b *testing.B) {
	base := startServer(b, benchEcho)
	benchSend(b, base+"/agents/echo")
}

// BenchmarkSendMessageContract compares, on one server in one run, the
// echo agent without a contract and an echo agent whose every attempt is
// gated by a 3-assertion contract (contains, regex, max_duration): the
// cost of the gate and of the verified result in each answer. Run:
// go test -run x -bench SendMessageContract -benchtime 6000x ./internal/node
func BenchmarkSendMessageContract(b *testing.B) {
	base := startServer(b, `workers: 64
log: {level: error}
agents:
  - name: echo
    type: echo
  - name: checked
    type: echo
    contract:
      onViolation: fail
      assertions:
        - {type: assert, message: echoes the greeting, check: {type: contains, value: hello}}
        - {type: assert, message: starts with it, check: {type: regex, pattern: "^hello"}}
        - {type: assert, message: answers at once, check: {type: max_duration, max: 1s}}
`)
	for _, agent := range []string{"echo", "checked", "echo", "checked"} {
		b.Run(agent, func(b *testing.B) { benchSend(b, base+"/agents/"+agent) })
	}
}

// BenchmarkSendMessagePostgres is BenchmarkSendMessage on the PostgreSQL
// store, in a fresh schema of the database PACTUM_TEST_POSTGRES names
// (default postgres://postgres@127.0.0.1:5432/test). Run:
// go test -run x -bench SendMessagePostgres -benchtime 6000x ./internal/node
func BenchmarkSendMessagePostgres(b *testing.B) {
	dsn := os.Getenv("PACTUM_TEST_POSTGRES")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Skipf("PostgreSQL not reachable: %v", err)
	}
	schema := fmt.Sprintf("bench_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		b.Fatal(err)
	}
	// Cleanups run after the function returns and after the server (its
	// cleanup is registered later) stopped: the connection stays open
	// until the schema is dropped.
	b.Cleanup(func() {
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			b.Errorf("drop the benchmark's schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("pool_max_conns", "32")
	u.RawQuery = q.Encode()
	base := startServerOn(b, u.String(), benchEcho)
	benchSend(b, base+"/agents/echo")
}

// BenchmarkSendMessageA2AGoInMemory is the baseline: a2a-go's own default
// request handler with its in-memory task store and an echo executor that
// creates a task, adds the artifact and completes it — the same answer as
// pactum's echo, with no durability. Same client, same machine.
func BenchmarkSendMessageA2AGoInMemory(b *testing.B) {
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(memEcho{})))
	b.Cleanup(srv.Close)
	benchSend(b, srv.URL)
}

// BenchmarkSendMessageExternal runs the same client against any A2A
// JSON-RPC endpoint named by PACTUM_BENCH_URL, e.g. another SDK's echo
// server, so baselines are measured with this harness too (see
// docs/benchmarks.md). Without the variable there is nothing to measure.
//
// PACTUM_BENCH_URL may name several endpoints, comma-separated (the nodes
// of one cluster, as bench/lib/pg.sh runs them): the requests then go to
// them in turn.
func BenchmarkSendMessageExternal(b *testing.B) {
	url := os.Getenv("PACTUM_BENCH_URL")
	if url == "" {
		b.Skip("set PACTUM_BENCH_URL to an A2A JSON-RPC endpoint")
	}
	benchCallURLs(b, strings.Split(url, ","), "SendMessage")
}

// BenchmarkSendStreamingMessage is BenchmarkSendMessage with
// SendStreamingMessage: every request reads the whole SSE stream up to the
// task's completed status. Run:
// go test -run x -bench SendStreamingMessage$ -benchtime 6000x ./internal/node
func BenchmarkSendStreamingMessage(b *testing.B) {
	base := startServer(b, benchEcho)
	benchCall(b, base+"/agents/echo", "SendStreamingMessage")
}

// BenchmarkSendMessageREST is BenchmarkSendMessage over the HTTP+JSON
// binding (POST …/message:send). Run:
// go test -run x -bench 'SendMessageREST$' -benchtime 6000x ./internal/node
func BenchmarkSendMessageREST(b *testing.B) {
	base := startServer(b, benchEcho)
	benchCall(b, base+"/agents/echo", "REST SendMessage")
}

// BenchmarkSendStreamingMessageREST is BenchmarkSendStreamingMessage over
// the HTTP+JSON binding (POST …/message:stream).
func BenchmarkSendStreamingMessageREST(b *testing.B) {
	base := startServer(b, benchEcho)
	benchCall(b, base+"/agents/echo", "REST SendStreamingMessage")
}

// BenchmarkSendMessage03 is BenchmarkSendMessage as an A2A 0.3 client
// sends it (message/send, no A2A-Version header). Run:
// go test -run x -bench 'SendMessage03$' -benchtime 6000x ./internal/node
func BenchmarkSendMessage03(b *testing.B) {
	base := startServer(b, benchEcho)
	benchCall(b, base+"/agents/echo", "0.3 SendMessage")
}

// BenchmarkSendStreamingMessage03 is BenchmarkSendStreamingMessage as an
// A2A 0.3 client sends it (message/stream).
func BenchmarkSendStreamingMessage03(b *testing.B) {
	base := startServer(b, benchEcho)
	benchCall(b, base+"/agents/echo", "0.3 SendStreamingMessage")
}

// BenchmarkSendStreamingMessageExternal is BenchmarkSendMessageExternal
// with SendStreamingMessage (bench/compare.sh drives it).
func BenchmarkSendStreamingMessageExternal(b *testing.B) {
	url := os.Getenv("PACTUM_BENCH_URL")
	if url == "" {
		b.Skip("set PACTUM_BENCH_URL to an A2A JSON-RPC endpoint")
	}
	benchCall(b, url, "SendStreamingMessage")
}

type memEcho struct{}

func (memEcho) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, ec.Message.Parts...), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, ec.Message.Parts...)), nil)
	}
}

func (memEcho) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// benchText is the text each request sends: "hello", or with
// PACTUM_BENCH_TEXT_BYTES=n, n bytes of "hello hello …", so that a run can
// measure what a larger message (a model's answer of a few KB, say)
// costs the store. The echo agent answers with the same text, in a
// message and an artifact.
func benchText(b *testing.B) string {
	v := os.Getenv("PACTUM_BENCH_TEXT_BYTES")
	if v == "" {
		return "hello"
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 5 {
		b.Fatalf("PACTUM_BENCH_TEXT_BYTES=%q: want a number of bytes, at least 5", v)
	}
	return strings.Repeat("hello ", n/6+1)[:n]
}

// benchSend runs b.N blocking SendMessage calls against url from 1 and 32
// concurrent clients and reports req/s, p50 and p99.
func benchSend(b *testing.B, url string) {
	benchCall(b, url, "SendMessage")
}

// benchCall runs b.N JSON-RPC calls of method (SendMessage or
// SendStreamingMessage) against url from 1 and 32 concurrent clients and
// reports req/s, p50 and p99. A call counts when its whole answer (for a
// stream, every event until the server ends it) arrived with status 200
// and contains TASK_STATE_COMPLETED.
func benchCall(b *testing.B, url, method string) {
	benchCallURLs(b, []string{url}, method)
}

// benchClients returns the client counts benchCallURLs measures: 1 and
// 32, or the comma-separated counts PACTUM_BENCH_CLIENTS names (bench/lib/
// pg.sh measures one node at a third of 32 clients, what each of three
// nodes serves, with PG_FAIR=1).
func benchClients(b *testing.B) []int {
	v := os.Getenv("PACTUM_BENCH_CLIENTS")
	if v == "" {
		return []int{1, 32}
	}
	var out []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("PACTUM_BENCH_CLIENTS=%q: %q is not a positive client count", v, f)
		}
		out = append(out, n)
	}
	return out
}

// restRoutes are the HTTP+JSON routes of the methods benchCall measures,
// under an agent's base URL.
var restRoutes = map[string]string{"SendMessage": "/message:send", "SendStreamingMessage": "/message:stream"}

// legacyMethods are the A2A 0.3 JSON-RPC names of the methods benchCall
// measures.
var legacyMethods = map[string]string{"SendMessage": "message/send", "SendStreamingMessage": "message/stream"}

// benchCallURLs is benchCall with requests spread over urls in turn. A
// method named "REST " + m is m over the HTTP+JSON binding (restRoutes)
// instead of JSON-RPC, "0.3 " + m is m as A2A 0.3 names and shapes it
// (no A2A-Version header).
func benchCallURLs(b *testing.B, urls []string, method string) {
	text := benchText(b)
	method, rest := strings.CutPrefix(method, "REST ")
	method, legacy := strings.CutPrefix(method, "0.3 ")
	completed := []byte("TASK_STATE_COMPLETED")
	if legacy {
		completed = []byte(`"state":"completed"`)
	}
	for _, clients := range benchClients(b) {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
			hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
			defer tr.CloseIdleConnections()
			var seq atomic.Int64
			lat := make([][]time.Duration, clients)
			var failed atomic.Int64
			created := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
			metrics.Read(created)
			before := created[0].Value.Uint64()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			per := b.N / clients
			for c := range clients {
				n := per
				if c < b.N%clients {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range n {
						id := seq.Add(1)
						// One format per request, as before the bindings were
						// added: the client shares the machine it measures.
						var body string
						to := urls[id%int64(len(urls))]
						switch {
						case rest:
							body = fmt.Sprintf(`{"message":{"messageId":"bench-%d-%d","role":"ROLE_USER","parts":[{"text":"%s"}]}}`, time.Now().UnixNano(), id, text)
							to += restRoutes[method]
						case legacy:
							body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s","params":{"message":{"kind":"message","messageId":"bench-%d-%d","role":"user","parts":[{"kind":"text","text":"%s"}]}}}`, id, legacyMethods[method], time.Now().UnixNano(), id, text)
						default:
							body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s","params":{"message":{"messageId":"bench-%d-%d","role":"ROLE_USER","parts":[{"text":"%s"}]}}}`, id, method, time.Now().UnixNano(), id, text)
						}
						req, _ := http.NewRequest(http.MethodPost, to, bytes.NewBufferString(body))
						req.Header.Set("Content-Type", "application/json")
						if !legacy {
							req.Header.Set("A2A-Version", "1.0")
						}
						if method == "SendStreamingMessage" {
							req.Header.Set("Accept", "text/event-stream")
						}
						t0 := time.Now()
						resp, err := hc.Do(req)
						if err != nil {
							failed.Add(1)
							continue
						}
						out, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						lat[c] = append(lat[c], time.Since(t0))
						if resp.StatusCode != 200 || !bytes.Contains(out, completed) ||
							(method == "SendStreamingMessage" && !bytes.Contains(out, []byte("data:"))) {
							failed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if f := failed.Load(); f > 0 {
				b.Fatalf("%d of %d requests failed", f, b.N)
			}
			all := slices.Concat(lat...)
			slices.Sort(all)
			pct := func(p float64) float64 {
				return float64(all[int(float64(len(all)-1)*p)]) / float64(time.Millisecond)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			// Goroutines started per call in this process: the client's and,
			// unless the server is external, the server's.
			metrics.Read(created)
			b.ReportMetric(float64(created[0].Value.Uint64()-before)/float64(b.N), "goroutines/op")
		})
	}
}
