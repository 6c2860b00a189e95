package a2aserver

import (
	"context"
	"iter"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// panicking is a RequestHandler whose GetTask and SubscribeToTask panic.
type panicking struct{ a2asrv.RequestHandler }

func (panicking) GetTask(context.Context, *a2a.GetTaskRequest) (*a2a.Task, error) {
	panic("GetTask broke")
}

func (panicking) SubscribeToTask(context.Context, *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	panic("SubscribeToTask broke")
}

// TestGRPCPanic checks that a panic in a gRPC call, unary or streaming,
// is answered as an internal error with a reference (as on HTTP) and the
// server goes on serving: gRPC does not recover handler panics itself,
// so one would end the process.
func TestGRPCPanic(t *testing.T) {
	t.Parallel()
	s := &Server{opts: Options{MaxBodyBytes: DefaultMaxBodyBytes}, agents: map[string]*endpoint{}, log: slog.New(slog.DiscardHandler)}
	g := s.NewGRPCServer()
	g.agents["boom"] = a2agrpc.NewHandler(panicking{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- g.Serve(t.Context(), ln) }()
	t.Cleanup(func() {
		if err := g.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := a2apb.NewA2AServiceClient(conn)
	for i := range 2 {
		_, err := c.GetTask(t.Context(), &a2apb.GetTaskRequest{Tenant: "boom", Id: "x"})
		if st := status.Convert(err); st.Code() != codes.Internal || !strings.HasPrefix(st.Message(), "internal error (ref ") {
			t.Errorf("GetTask %d: %v, want Internal with a reference", i, err)
		}
		ss, err := c.SubscribeToTask(t.Context(), &a2apb.SubscribeToTaskRequest{Tenant: "boom", Id: "x"})
		if err == nil {
			_, err = ss.Recv()
		}
		if st := status.Convert(err); st.Code() != codes.Internal || !strings.HasPrefix(st.Message(), "internal error (ref ") {
			t.Errorf("SubscribeToTask %d: %v, want Internal with a reference", i, err)
		}
	}
}
