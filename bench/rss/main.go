// Command rss measures whether `pactum serve` keeps memory per finished
// task (issue 15: RSS after 100,000 settled tasks within 20 % of RSS after
// 1,000). It is a benchmark tool, not part of pactum.
//
// It starts the given pactum binary on a free loopback port over a new
// SQLite file, configured as bench/compare.sh configures it (echo agent,
// audit on, 64 workers, log level error), then sends blocking SendMessage
// requests (the request of BenchmarkSendMessageExternal in
// internal/node) from -clients concurrent clients. At each count in -at
// (cumulative) it waits -settle with no load, then reads the server's
// /proc/<pid>/status (VmRSS, VmHWM, RssAnon, RssFile), its /metrics (the Go
// runtime's go_memstats_* and the store's succeeded-task count) and the
// sizes of the database files, and prints one line with how long the
// scrape took. The last line is the
// ratio of the last VmRSS to the first.
//
// No GC is forced: after the settle the Go heap holds whatever the last
// cycle left, as it would for a scrape of an idle production node. The
// Go-resident figure is go_memstats_sys_bytes minus heap_released, which
// approximates the memory the Go runtime holds; the rest of VmRSS is the
// binary's text and SQLite's own heap (modernc.org/sqlite allocates its page
// caches outside the Go heap).
//
//	go build -o /tmp/pactum ./cmd/pactum
//	go run ./bench/rss -pactum /tmp/pactum -at 1000,100000
//
// Every request has a 30 s timeout, the whole run -timeout (default 20m);
// the server is stopped (SIGTERM, then SIGKILL after 10 s) and its
// directory removed on every exit path, an interrupt included.
package main

import (
	"bufio"
	"bytes"
	"context"
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rss:", err)
		os.Exit(1)
	}
}

type options struct {
	pactum  string
	at      []int
	clients int
	settle  time.Duration
	timeout time.Duration
}

func parseFlags() (options, error) {
	var o options
	var at string
	flag.StringVar(&o.pactum, "pactum", "", "the pactum binary to run (required)")
	flag.StringVar(&at, "at", "1000,100000", "cumulative task counts at which to read memory")
	flag.IntVar(&o.clients, "clients", 32, "concurrent clients")
	flag.DurationVar(&o.settle, "settle", 3*time.Second, "idle time before each reading")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "bound on the whole run")
	flag.Parse()
	if o.pactum == "" {
		return o, errors.New("-pactum is required")
	}
	prev := 0
	for _, f := range strings.Split(at, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= prev {
			return o, fmt.Errorf("-at %q: want increasing positive counts", at)
		}
		o.at, prev = append(o.at, n), n
	}
	if o.clients < 1 {
		return o, errors.New("-clients must be at least 1")
	}
	return o, nil
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "pactum-rss-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, err := freePort()
	if err != nil {
		return err
	}
	db := filepath.Join(dir, "bench.db")
	cfg := fmt.Sprintf("listen: %s\nstore: sqlite://%s\nworkers: 64\nlog:\n  level: error\nagents:\n  - name: echo\n    type: echo\n", addr, db)
	cfgPath := filepath.Join(dir, "pactum.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, "pactum.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(o.pactum, "serve", "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start pactum: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer stopServer(cmd, exited)

	base := "http://" + addr
	if err := waitReady(ctx, base, exited); err != nil {
		return fmt.Errorf("%w (log: %s)", err, tail(logf.Name()))
	}
	fmt.Printf("# pactum serve pid %d on %s, sqlite %s, %d clients, settle %s\n", cmd.Process.Pid, addr, db, o.clients, o.settle)
	fmt.Printf("%-8s %9s %9s %9s %9s %10s %10s %9s %9s %9s %9s %6s\n",
		"tasks", "VmRSS", "VmHWM", "RssAnon", "RssFile", "heapInuse", "heapAlloc", "goRes", "nonGo", "db", "wal", "gor")
	hc := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: o.clients, MaxConnsPerHost: o.clients},
		Timeout:   30 * time.Second,
	}
	var first, last reading
	sent := 0
	for i, target := range o.at {
		start := time.Now()
		if err := send(ctx, hc, base+"/agents/echo", sent, target-sent, o.clients); err != nil {
			return fmt.Errorf("after %d tasks: %w", sent, err)
		}
		took := time.Since(start)
		sent = target
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.settle):
		}
		r, err := read(ctx, hc, base, cmd.Process.Pid, db)
		if err != nil {
			return err
		}
		count := strconv.Itoa(r.completed)
		switch {
		case r.completed < 0:
			// The gauge is missing when counting took longer than the
			// collector's 5 s timeout.
			count = "none"
		case r.completed != target:
			return fmt.Errorf("store counts %d succeeded tasks, want %d", r.completed, target)
		}
		fmt.Printf("%-8d %9s %9s %9s %9s %10s %10s %9s %9s %9s %9s %6d   (%.0f req/s; scrape %s, succeeded %s)\n", target,
			mb(r.rss), mb(r.hwm), mb(r.anon), mb(r.file), mb(r.heapInuse), mb(r.heapAlloc),
			mb(r.goRes()), mb(r.rss-r.goRes()), mb(r.db), mb(r.wal), r.goroutines, float64(target-prevCount(o.at, i))/took.Seconds(),
			r.scrape.Round(time.Millisecond), count)
		if i == 0 {
			first = r
		}
		last = r
	}
	if len(o.at) > 1 {
		fmt.Printf("# VmRSS %d/%d tasks: %.2fx (%s -> %s); Go heap in use %.2fx; non-Go %.2fx\n",
			o.at[len(o.at)-1], o.at[0], float64(last.rss)/float64(first.rss), mb(first.rss), mb(last.rss),
			float64(last.heapInuse)/float64(first.heapInuse), float64(last.rss-last.goRes())/float64(first.rss-first.goRes()))
	}
	return nil
}

func prevCount(at []int, i int) int {
	if i == 0 {
		return 0
	}
	return at[i-1]
}

// freePort returns a loopback address nothing listens on.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitReady(ctx context.Context, base string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("pactum exited at start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("pactum not ready after 30s")
}

func stopServer(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// send makes n blocking SendMessage calls from clients goroutines; ids
// continue from offset. Any failed call fails the run.
func send(ctx context.Context, hc *http.Client, url string, offset, n, clients int) error {
	var next atomic.Int64
	next.Store(int64(offset))
	end := int64(offset + n)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range clients {
		wg.Go(func() {
			for {
				id := next.Add(1)
				if id > end || ctx.Err() != nil {
					return
				}
				if err := call(ctx, hc, url, id); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

func call(ctx context.Context, hc *http.Client, url string, id int64) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"rss-%d-%d","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`, id, time.Now().UnixNano(), id)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("TASK_STATE_COMPLETED")) {
		return fmt.Errorf("request %d: status %d: %.200s", id, resp.StatusCode, out)
	}
	return nil
}

// reading is the server's memory at one point; sizes in bytes.
type reading struct {
	rss, hwm, anon, file               int64
	heapInuse, heapAlloc, goSys, goRel int64
	goroutines, completed              int
	db, wal                            int64
	// scrape is how long /metrics took to answer (it counts the store's
	// tasks by state).
	scrape time.Duration
}

// goRes approximates what the Go runtime holds resident: what it obtained
// from the OS less the heap it gave back.
func (r reading) goRes() int64 { return r.goSys - r.goRel }

func read(ctx context.Context, hc *http.Client, base string, pid int, db string) (reading, error) {
	r := reading{completed: -1}
	// /proc first: the scrape below allocates and reads the store.
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return r, err
	}
	for _, line := range strings.Split(string(st), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			r.rss = n << 10
		case "VmHWM":
			r.hwm = n << 10
		case "RssAnon":
			r.anon = n << 10
		case "RssFile":
			r.file = n << 10
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return r, fmt.Errorf("scrape /metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return r, fmt.Errorf("scrape /metrics: %w", err)
	}
	r.scrape = time.Since(t0)
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_memstats_heap_inuse_bytes":
			r.heapInuse = int64(v)
		case "go_memstats_heap_alloc_bytes":
			r.heapAlloc = int64(v)
		case "go_memstats_sys_bytes":
			r.goSys = int64(v)
		case "go_memstats_heap_released_bytes":
			r.goRel = int64(v)
		case "go_goroutines":
			r.goroutines = int(v)
		case `pactum_tasks{state="succeeded"}`:
			r.completed = int(v)
		}
	}
	if err := sc.Err(); err != nil {
		return r, fmt.Errorf("scrape /metrics: %w", err)
	}
	r.db, r.wal = size(db), size(db+"-wal")
	return r, nil
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func mb(n int64) string { return fmt.Sprintf("%.1fM", float64(n)/(1<<20)) }

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}
