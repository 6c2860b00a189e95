package negotiation_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/negotiation"
	"github.com/pactum/pactum/internal/coordtest"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"

	_ "github.com/pactum/pactum/store/sqlite"
)

// ownAssertion is the provider's own contract's assertion.
var ownAssertion = contract.ContractAssertion{Type: contract.Assert, Message: "not empty",
	Check: contract.Check{Type: "regex", Target: "output", Pattern: "."}}

type bundle struct {
	svc      *negotiation.Service
	proposer *negotiation.Key
	provider *negotiation.Key
}

// setup returns a negotiation service of agent echo over a real
// Coordinator on a SQLite file.
func setup(t *testing.T) *bundle {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{proposer: newKey(t, "http://a.example"), provider: newKey(t, "http://b.example")}
	p := &negotiation.Provider{Key: b.provider, Capability: negotiation.Capability{
		Agent: "echo", Action: "echo", Produces: []string{"message"}, Assertions: []contract.ContractAssertion{ownAssertion}}}
	coord := coordtest.Start(t, task.Options{Store: st, Agents: []task.AgentSpec{{Name: negotiation.Agent("echo"), Runner: p.Runner(),
		Timeout: 10 * time.Second, Retry: task.RetryPolicy{MaxAttempts: 1}}}})
	b.svc = &negotiation.Service{Coordinator: coord, Provider: p}
	return b
}

// propose proposes contract (JSON) signed by the proposer.
func (b *bundle) propose(t *testing.T, ctx context.Context, c string) *negotiation.View {
	t.Helper()
	canonical, _ := contract.Canonical(parse(t, c))
	sig, _ := b.proposer.Sign(canonical, negotiation.RoleProposer)
	v, err := b.svc.Propose(ctx, &negotiation.Move{Action: negotiation.ActionPropose, Contract: canonical, Signature: sig})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// sign returns the proposer's signature over v's contract, modified by
// mods.
func (b *bundle) sign(t *testing.T, v *negotiation.View, mods []negotiation.Modification) string {
	t.Helper()
	c := parse(t, string(v.Contract))
	if mods != nil {
		var err error
		if c, _, err = negotiation.Apply(c, mods); err != nil {
			t.Fatal(err)
		}
	}
	canonical, _ := contract.Canonical(c)
	sig, _ := b.proposer.Sign(canonical, negotiation.RoleProposer)
	return sig
}

// foreign is a one-step contract for another agent, without the
// provider's assertion.
const foreign = `{"version":"1.0","id":"greeting","steps":[{"id":"greet","agent":"someone","assertions":[{"type":"assert","message":"says hello","check":{"type":"regex","target":"output","pattern":"hello"}}]}]}`

func TestNegotiateCounterAccept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := task.WithCaller(context.Background(), "alice")
	v := b.propose(t, ctx, foreign)
	if v.Status != negotiation.StatusCounter || v.By != negotiation.RoleProvider || len(v.Modifications) != 2 {
		t.Fatalf("after the proposal: %+v", v)
	}
	if v.Modifications[0].Op != negotiation.OpChange || v.Modifications[0].Path != "/steps/0/agent" || v.Modifications[0].Reason == "" {
		t.Errorf("first modification = %+v", v.Modifications[0])
	}
	// Another actor does not see it.
	if _, err := b.svc.Get(task.WithCaller(context.Background(), "mallory"), v.ID); task.ErrorCode(err) != task.CodeNotFound {
		t.Errorf("another actor's Get: %v, want not_found", err)
	}
	// A signature over something else refuses the round; nothing changes.
	bad := b.sign(t, &negotiation.View{Contract: json.RawMessage(foreign)}, nil)
	if _, err := b.svc.Answer(ctx, v.ID, &negotiation.Move{Action: negotiation.ActionAccept, Signature: bad}); task.ErrorCode(err) != task.CodeInvalidArgument {
		t.Errorf("accept with a bad signature: %v, want invalid_argument", err)
	}
	// A counter that makes the contract invalid names the path.
	mods := []negotiation.Modification{{Op: negotiation.OpChange, Path: "/steps/0/assertions/0/type", Value: json.RawMessage(`"maybe"`), Reason: "r"}}
	_, err := b.svc.Answer(ctx, v.ID, &negotiation.Move{Action: negotiation.ActionCounter, Modifications: mods, Signature: "x"})
	if task.ErrorCode(err) != task.CodeInvalidArgument || !strings.Contains(err.Error(), "steps[0].assertions[0].type") {
		t.Errorf("an invalid counter: %v", err)
	}
	acc, err := b.svc.Answer(ctx, v.ID, &negotiation.Move{Action: negotiation.ActionAccept, Signature: b.sign(t, v, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if acc.Status != negotiation.StatusAccepted || acc.Accepted == nil || acc.Accepted.Digest != v.Digest {
		t.Fatalf("after accept: %+v", acc)
	}
	if p := acc.Accepted.Parties; p[0].Key != b.proposer.Thumbprint || p[1].Key != b.provider.Thumbprint {
		t.Errorf("parties = %+v", p)
	}
	if _, err := b.svc.Answer(ctx, v.ID, &negotiation.Move{Action: negotiation.ActionReject, Reason: "late"}); task.ErrorCode(err) != task.CodeConflict {
		t.Errorf("a move after the end: %v, want conflict", err)
	}
}

func TestNegotiateAcceptAsProposed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ok := strings.Replace(foreign, `"agent":"someone"`, `"agent":"echo"`, 1)
	ok = strings.Replace(ok, `"assertions":[`, `"assertions":[{"type":"assert","message":"not empty","check":{"type":"regex","target":"output","pattern":"."}},`, 1)
	v := b.propose(t, ctx, ok)
	if v.Status != negotiation.StatusAccepted || v.Accepted == nil {
		t.Fatalf("%+v", v)
	}
}

func TestNegotiateProposerCountersThenRejects(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	v := b.propose(t, ctx, foreign)
	// The proposer takes the agent change but drops the provider's
	// assertion: the provider counters again, adding it back.
	c := parse(t, string(v.Contract))
	mods := []negotiation.Modification{{Op: negotiation.OpRemove, Path: "/steps/0/assertions/1", Reason: "we do not need it"}}
	v2, err := b.svc.Answer(ctx, v.ID, &negotiation.Move{Action: negotiation.ActionCounter, Modifications: mods, Signature: b.sign(t, v, mods)})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Status != negotiation.StatusCounter || v2.Round != 2 || len(v2.Modifications) != 1 || v2.Modifications[0].Op != negotiation.OpAdd {
		t.Fatalf("round 2: %+v", v2)
	}
	if len(c.Steps[0].Assertions) != 2 {
		t.Fatalf("the first counter had %d assertions", len(c.Steps[0].Assertions))
	}
	v3, err := b.svc.Answer(ctx, v.ID, &negotiation.Move{Action: negotiation.ActionReject, Reason: "too strict"})
	if err != nil {
		t.Fatal(err)
	}
	if v3.Status != negotiation.StatusRejected || !strings.Contains(v3.Reason, "too strict") {
		t.Fatalf("after reject: %+v", v3)
	}
}

func TestNegotiateProviderRejects(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// The only step creates a file: echo produces messages only.
	files := `{"version":"1.0","id":"report","resources":[{"id":"r","type":"file","location":"r.md"}],"steps":[{"id":"write","creates":["r"]}]}`
	v := b.propose(t, ctx, files)
	if v.Status != negotiation.StatusRejected || !strings.Contains(v.Reason, "type file") {
		t.Fatalf("%+v", v)
	}
}

func TestProposeRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	canonical, _ := contract.Canonical(parse(t, foreign))
	for name, m := range map[string]*negotiation.Move{
		"unsigned":     {Action: negotiation.ActionPropose, Contract: canonical},
		"not propose":  {Action: negotiation.ActionAccept},
		"bad contract": {Action: negotiation.ActionPropose, Contract: json.RawMessage(`{"id":"x"}`), Signature: "a..b"},
		"provider's signature": {Action: negotiation.ActionPropose, Contract: canonical, Signature: func() string {
			s, _ := b.provider.Sign(canonical, negotiation.RoleProvider)
			return s
		}()},
	} {
		if _, err := b.svc.Propose(ctx, m); task.ErrorCode(err) != task.CodeInvalidArgument {
			t.Errorf("%s: %v, want invalid_argument", name, err)
		}
	}
	b.svc.Provider.Key = nil
	if _, err := b.svc.Propose(ctx, &negotiation.Move{Action: negotiation.ActionPropose}); task.ErrorCode(err) != task.CodeUnsupported {
		t.Errorf("without a key: %v", err)
	}
}

func TestValidateReport(t *testing.T) {
	t.Parallel()
	capab := negotiation.Capability{Agent: "echo", Produces: []string{"message"}, Assertions: []contract.ContractAssertion{ownAssertion}}
	r := capab.Validate([]byte(foreign))
	if !r.Check.Valid || r.Check.Steps != 1 || r.Check.Assertions != 1 || r.Acceptable || len(r.Counter) != 2 {
		t.Fatalf("%+v", r)
	}
	if s := r.Steps[0]; s.Honoured || len(s.Missing) != 1 || !strings.Contains(s.Reasons[0], "someone") {
		t.Errorf("step = %+v", s)
	}
	r = capab.Validate([]byte("version: '1.0'\nid: x\nsteps:\n  - id: a\n    dependsOn: [b]\n"))
	if r.Check.Valid || len(r.Check.Errors) == 0 || r.Check.Errors[0].Line == 0 || r.Check.Errors[0].Path == "" {
		t.Errorf("invalid contract: %+v", r.Check)
	}
}

func TestNegotiateMaxRounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.svc.Provider.MaxRounds = 1
	ctx := context.Background()
	v := b.propose(t, ctx, foreign)
	mods := []negotiation.Modification{{Op: negotiation.OpRemove, Path: "/steps/0/assertions/1", Reason: "again"}}
	v2, err := b.svc.Answer(ctx, v.ID, &negotiation.Move{Action: negotiation.ActionCounter, Modifications: mods, Signature: b.sign(t, v, mods)})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Status != negotiation.StatusRejected || !strings.Contains(v2.Reason, "at most 1") {
		t.Fatalf("%+v", v2)
	}
}

// TestRunnerRefusesAMoveThatCannotStand: a move that reaches the runner
// without the endpoint's check (a Continue of its own) is refused there:
// the provider's offer stands, the refusal is the reason.
func TestRunnerRefusesAMoveThatCannotStand(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	v := b.propose(t, ctx, foreign)
	m := &negotiation.Move{Action: negotiation.ActionAccept, Signature: b.sign(t, &negotiation.View{Contract: json.RawMessage(foreign)}, nil)}
	msg, err := m.Message(task.RoleUser)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Coordinator.Continue(ctx, v.ID, msg); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Coordinator.Wait(ctx, v.ID); err != nil {
		t.Fatal(err)
	}
	again, err := b.svc.Get(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != negotiation.StatusCounter || again.Digest != v.Digest || again.Signature != v.Signature || !strings.Contains(again.Reason, "refused") {
		t.Fatalf("%+v", again)
	}
	// The standing offer can still be accepted.
	done, err := b.svc.Answer(ctx, v.ID, &negotiation.Move{Action: negotiation.ActionAccept, Signature: b.sign(t, v, nil)})
	if err != nil || done.Status != negotiation.StatusAccepted {
		t.Fatalf("%+v %v", done, err)
	}
}
