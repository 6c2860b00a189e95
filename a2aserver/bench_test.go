package a2aserver_test

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// BenchmarkSendMessage measures a blocking SendMessage to the echo agent
// over loopback: submit, run, durable record and the answer, per transport.
func BenchmarkSendMessage(b *testing.B) {
	for _, proto := range transports {
		b.Run(string(proto), func(b *testing.B) {
			bd := setup(b)
			c := bd.client("echo", proto)
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(16) // 32 clients on 2 cores, as in ARCHITECTURE.md
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := c.SendMessage(ctx, sendReq(userMessage("bench")))
					if err != nil {
						b.Error(err)
						return
					}
					if tk, ok := res.(*a2a.Task); !ok || tk.Status.State != a2a.TaskStateCompleted {
						b.Errorf("result %v", res)
						return
					}
				}
			})
		})
	}
}
