package node_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSettledTasksLeaveNothing: a node keeps nothing in the Go heap per
// finished task (issue 15: RSS after 100,000 settled tasks within 20 % of
// RSS after 1,000). After warm-up, 3,000 more blocking SendMessage calls
// from 32 clients leave the count of live heap objects and of goroutines
// where they were: a map entry, subscription, timer or goroutine kept per
// task would add at least 3,000. Not parallel, so that no other test's
// allocations are counted.
func TestSettledTasksLeaveNothing(t *testing.T) {
	base := startServer(t, "workers: 64\nlog: {level: error}\nagents:\n  - name: echo\n    type: echo\n")
	url := base + "/agents/echo"
	tr := &http.Transport{MaxIdleConnsPerHost: 32, MaxConnsPerHost: 32}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var seq atomic.Int64
	sendSettled(t, hc, url, &seq, 500)
	objects, goroutines := liveAfterIdle(tr)
	const more = 3000
	sendSettled(t, hc, url, &seq, more)
	objects2, goroutines2 := liveAfterIdle(tr)
	t.Logf("after 500 tasks: %d heap objects, %d goroutines; after %d more: %d, %d",
		objects, goroutines, more, objects2, goroutines2)
	// The slack is for pools and buffers that settle at a different size;
	// measured: +23 to +275 objects, and +20,000 with a leaked map entry
	// per task (the Coordinator's running map never emptied).
	if grew := int64(objects2) - int64(objects); grew > more/3 {
		t.Errorf("%d more tasks left %d more live heap objects (%d -> %d): something is kept per task",
			more, grew, objects, objects2)
	}
	if goroutines2 > goroutines+8 {
		t.Errorf("%d more tasks left %d more goroutines (%d -> %d)", more, goroutines2-goroutines, goroutines, goroutines2)
	}
}

// sendSettled makes n blocking SendMessage calls (the request of
// BenchmarkSendMessage) from 32 clients; each must answer with a completed
// task.
func sendSettled(t *testing.T, hc *http.Client, url string, seq *atomic.Int64, n int64) {
	t.Helper()
	end := seq.Load() + n
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				id := seq.Add(1)
				if id > end {
					return
				}
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"mem-%d","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`, id, id)
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("A2A-Version", "1.0")
				resp, err := hc.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("TASK_STATE_COMPLETED")) {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of %d requests failed", f, n)
	}
}

// liveAfterIdle closes the client's idle connections, gives the server a
// moment to end their goroutines, collects garbage and returns the live
// heap objects and the goroutines.
func liveAfterIdle(tr *http.Transport) (objects uint64, goroutines int) {
	tr.CloseIdleConnections()
	time.Sleep(500 * time.Millisecond)
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapObjects, runtime.NumGoroutine()
}
