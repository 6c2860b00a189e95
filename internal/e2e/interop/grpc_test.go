package interop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pactum/pactum/internal/bearer"
)

// TestGoClientGRPCBearer runs the official a2a-go gRPC transport against
// a pactum subprocess with auth: bearer and two actors: a call without a
// token, or with a wrong one, is refused as unauthenticated; a caller
// acts as its token's actor and does not see the other actor's task; a
// call naming an agent the server does not serve is refused with a
// message naming the agents it serves.
func TestGoClientGRPCBearer(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "auth.yaml")
	const src = "auth: bearer\nagents:\n  - {name: echo, type: echo}\n  - {name: other, type: echo}\n" +
		"actors:\n  - {name: alice, actions: ['*'], token_env: PACTUM_ALICE}\n  - {name: bob, actions: ['*'], token_env: PACTUM_BOB}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := setupGRPC(t, cfg, "PACTUM_ALICE=alice-7f3a", "PACTUM_BOB=bob-91c2")
	ctx, cancel := context.WithTimeout(t.Context(), stepTimeout)
	defer cancel()

	card, err := agentcard.DefaultResolver.Resolve(ctx, srv.AgentURL("echo"))
	if err != nil {
		t.Fatalf("resolve the echo card: %v", err)
	}
	if iface := interfaceFor(card, a2a.TransportProtocolGRPC); iface == nil || iface.URL != srv.GRPC || iface.Tenant != "echo" {
		t.Fatalf("echo card's gRPC interface %+v: want url %s, tenant echo", iface, srv.GRPC)
	}
	client := func(opts ...grpc.DialOption) *a2aclient.Client {
		t.Helper()
		opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
		c, err := a2aclient.NewFromCard(ctx, card, a2agrpc.WithGRPCTransport(opts...),
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolGRPC}}))
		if err != nil {
			t.Fatalf("gRPC client: %v", err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	msg := func(text string) *a2a.SendMessageRequest {
		return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
	}

	for name, c := range map[string]*a2aclient.Client{
		"without a token":  client(),
		"with a bad token": client(grpc.WithPerRPCCredentials(bearer.PerRPC{Token: "nope", AllowInsecure: true})),
	} {
		if _, err := c.SendMessage(ctx, msg("hi")); !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Errorf("SendMessage %s: %v, want %v", name, err, a2a.ErrUnauthenticated)
		}
		if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Errorf("ListTasks %s: %v, want %v", name, err, a2a.ErrUnauthenticated)
		}
	}

	alice := client(grpc.WithPerRPCCredentials(bearer.PerRPC{Token: "alice-7f3a", AllowInsecure: true}))
	bob := client(grpc.WithPerRPCCredentials(bearer.PerRPC{Token: "bob-91c2", AllowInsecure: true}))
	res, err := alice.SendMessage(ctx, msg("alice's"))
	if err != nil {
		t.Fatalf("alice's SendMessage: %v", err)
	}
	tk, ok := res.(*a2a.Task)
	if !ok || tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("alice's SendMessage returned %#v, want a completed task", res)
	}
	if got, err := alice.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID}); err != nil || got.ID != tk.ID {
		t.Errorf("alice's GetTask of her task: %v, %v", got, err)
	}
	if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's GetTask of alice's task: %v, want %v", err, a2a.ErrTaskNotFound)
	}
	if _, err := bob.CancelTask(ctx, &a2a.CancelTaskRequest{ID: tk.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's CancelTask of alice's task: %v, want %v", err, a2a.ErrTaskNotFound)
	}
	list, err := bob.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatalf("bob's ListTasks: %v", err)
	}
	if slices.ContainsFunc(list.Tasks, func(x *a2a.Task) bool { return x.ID == tk.ID }) {
		t.Errorf("bob's ListTasks holds alice's task %s", tk.ID)
	}

	// A call names its agent in the tenant field; the client sends the
	// card's, the transport sends what it is given.
	conn, err := grpc.NewClient(srv.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(bearer.PerRPC{Token: "alice-7f3a", AllowInsecure: true}))
	if err != nil {
		t.Fatal(err)
	}
	tr := a2agrpc.NewGRPCTransport(conn)
	defer tr.Destroy()
	params := a2aclient.ServiceParams{a2a.SvcParamVersion: {string(a2a.Version)}}
	_, err = tr.GetTask(ctx, params, &a2a.GetTaskRequest{Tenant: "nope", ID: tk.ID})
	if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), `no agent named "nope"`) || !strings.Contains(err.Error(), "echo, other") {
		t.Errorf("GetTask naming agent nope: %v, want %v naming nope and the agents echo, other", err, a2a.ErrInvalidParams)
	}
	_, err = tr.GetTask(ctx, params, &a2a.GetTaskRequest{ID: tk.ID})
	if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "names no agent") {
		t.Errorf("GetTask naming no agent: %v, want %v saying it names none", err, a2a.ErrInvalidParams)
	}
	if _, err := tr.GetTask(ctx, params, &a2a.GetTaskRequest{Tenant: "other", ID: tk.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTask of echo's task through agent other: %v, want %v", err, a2a.ErrTaskNotFound)
	}
	if got, err := tr.GetTask(ctx, params, &a2a.GetTaskRequest{Tenant: "echo", ID: tk.ID}); err != nil || got.ID != tk.ID {
		t.Errorf("GetTask through tenant echo: %v, %v", got, err)
	}
}

// TestGRPCContractsExtension: over gRPC the contracts extension is
// activated by the a2a-extensions metadata (the verified result under
// its key in the task's metadata), and an agent that requires it refuses
// a call without it with ExtensionSupportRequired.
func TestGRPCContractsExtension(t *testing.T) {
	t.Parallel()
	cfg, err := filepath.Abs(filepath.Join("testdata", "contracts-extension.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := setupGRPC(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), stepTimeout)
	defer cancel()
	conn, err := grpc.NewClient(srv.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	tr := a2agrpc.NewGRPCTransport(conn)
	defer tr.Destroy()
	msg := func(agent string) *a2a.SendMessageRequest {
		return &a2a.SendMessageRequest{Tenant: agent, Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}
	}
	plain := a2aclient.ServiceParams{a2a.SvcParamVersion: {string(a2a.Version)}}
	activated := a2aclient.ServiceParams{a2a.SvcParamVersion: {string(a2a.Version)}, a2a.SvcParamExtensions: {contractsURI}}
	for _, agent := range []string{"checked", "strict"} {
		res, err := tr.SendMessage(ctx, activated, msg(agent))
		if err != nil {
			t.Fatalf("%s, activated: %v", agent, err)
		}
		tk, ok := res.(*a2a.Task)
		if !ok || tk.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("%s, activated: %#v", agent, res)
		}
		if vr, _ := tk.Metadata[contractsURI].(map[string]any); vr == nil || vr["verifiedResult"] == nil {
			t.Errorf("%s, activated: metadata %v has no verified result under %s", agent, tk.Metadata, contractsURI)
		}
	}
	res, err := tr.SendMessage(ctx, plain, msg("checked"))
	if tk, ok := res.(*a2a.Task); err != nil || !ok || tk.Metadata[contractsURI] != nil {
		t.Errorf("checked, not activated: %v, %#v", err, res)
	}
	if _, err := tr.SendMessage(ctx, plain, msg("strict")); !errors.Is(err, a2a.ErrExtensionSupportRequired) || !strings.Contains(err.Error(), contractsURI) {
		t.Errorf("strict, not activated: %v, want %v naming %s", err, a2a.ErrExtensionSupportRequired, contractsURI)
	}
}
