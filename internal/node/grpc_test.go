package node_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/internal/e2e/mdblock"
	"github.com/pactum/pactum/internal/node"
)

// TestGRPCDocExample serves the gRPC example configuration of docs/a2a.md
// (on free loopback ports instead of 9000 and 9001) and drives it as the
// document says: the card's gRPC interface names the gRPC listener and
// the agent as tenant; the official a2a-go gRPC client with the actor's
// token gets its task done, one without a token is refused. When the
// node stops, its gRPC listener is closed with it.
func TestGRPCDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "a2a.md"))
	if err != nil {
		t.Fatal(err)
	}
	yml, err := mdblock.Extract(string(doc), "<!-- grpc-example-config -->", "<!-- /grpc-example-config -->", "yaml", "the gRPC example configuration's")
	if err != nil {
		t.Fatalf("docs/a2a.md: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	grpcAddr := freeAddr(t)
	for _, s := range []string{"127.0.0.1:9000", "127.0.0.1:9001"} {
		if !strings.Contains(yml, s) {
			t.Fatalf("the example configuration does not name %s:\n%s", s, yml)
		}
	}
	yml = strings.NewReplacer("127.0.0.1:9000", ln.Addr().String(), "127.0.0.1:9001", grpcAddr).Replace(yml)
	cfg, err := config.Parse([]byte(yml+fmt.Sprintf("store: %q\n", "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"))), "a2a.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PACTUM_CI_TOKEN", "ci-secret-5d1e")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := node.New(ctx, cfg, ".", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln, 10*time.Second) }()

	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	card, err := agentcard.DefaultResolver.Resolve(cctx, "http://"+ln.Addr().String()+"/agents/echo")
	if err != nil {
		t.Fatal(err)
	}
	var iface *a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == a2a.TransportProtocolGRPC {
			iface = i
		}
	}
	if iface == nil || iface.URL != grpcAddr || iface.Tenant != "echo" || iface.ProtocolVersion != a2a.Version {
		t.Fatalf("the card's gRPC interface is %+v, want url %s, tenant echo, version 1.0", iface, grpcAddr)
	}
	client := func(opts ...grpc.DialOption) *a2aclient.Client {
		opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
		c, err := a2aclient.NewFromCard(cctx, card, a2agrpc.WithGRPCTransport(opts...),
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolGRPC}}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello over gRPC"))}
	res, err := client(grpc.WithPerRPCCredentials(bearer.PerRPC{Token: "ci-secret-5d1e", AllowInsecure: true})).SendMessage(cctx, req)
	if err != nil {
		t.Fatalf("SendMessage with the token: %v", err)
	}
	if tk, ok := res.(*a2a.Task); !ok || tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("SendMessage returned %#v, want a completed task", res)
	}
	if _, err := client().SendMessage(cctx, req); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Errorf("SendMessage without a token: %v, want %v", err, a2a.ErrUnauthenticated)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ServeListener: %v", err)
	}
	if c, err := net.Dial("tcp", grpcAddr); err == nil {
		c.Close()
		t.Errorf("the gRPC listener %s still accepts connections after the node stopped", grpcAddr)
	}
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
