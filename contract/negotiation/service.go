package negotiation

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// Status is where a negotiation stands.
type Status string

// Statuses.
const (
	// StatusProposed: the provider is deciding on the newest proposal.
	StatusProposed Status = "proposed"
	// StatusCounter: the provider counter-proposed; the proposer answers.
	StatusCounter Status = "counter"
	// StatusAccepted: both parties signed the contract (View.Accepted).
	StatusAccepted Status = "accepted"
	// StatusRejected: one party rejected it (View.Reason says why).
	StatusRejected Status = "rejected"
)

// View is a negotiation as its parties read it.
type View struct {
	// ID is the negotiation's id (its task's) and Agent the provider's
	// agent.
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// Status is where it stands; State is its task's state.
	Status Status     `json:"status"`
	State  task.State `json:"state"`
	// Round counts the proposer's proposals so far.
	Round int `json:"round"`
	// Contract is the contract on the table (canonical JSON), Digest its
	// digest; By says who offered it (proposer or provider), Signature is
	// the offerer's signature over it and Modifications what its offer
	// changed.
	Contract      json.RawMessage `json:"contract,omitempty"`
	Digest        string          `json:"digest,omitempty"`
	By            Role            `json:"by,omitempty"`
	Signature     string          `json:"signature,omitempty"`
	Modifications []Modification  `json:"modifications,omitempty"`
	// Reason is why it was rejected, or why the proposer's last move was
	// refused.
	Reason string `json:"reason,omitempty"`
	// Accepted is the accepted contract, signed by both (status
	// accepted), verified.
	Accepted *Accepted `json:"accepted,omitempty"`
}

// ViewOf returns the view of a negotiation's task t (with its whole
// history). An accepted contract is verified (Accepted.Verify): one that
// does not verify (a tampered store) is an error of code
// contract_violation.
func ViewOf(t *task.Task, agent string) (*View, error) {
	v := &View{ID: t.ID, Agent: agent, State: t.State}
	s, _ := replay(t.History)
	if s.offer != nil {
		canonical, err := contract.Canonical(s.offer.Contract())
		if err != nil {
			return nil, err
		}
		v.Contract, v.Digest, v.Signature, v.Modifications, v.Round = canonical, s.offer.Digest(), s.offerSig, s.mods, s.rounds
		v.By = RoleProposer
		if s.byProvider {
			v.By = RoleProvider
		}
		v.Reason = s.reason
	}
	switch t.State {
	case task.StateInputRequired:
		v.Status = StatusCounter
	case task.StateSucceeded:
		a, err := AcceptedOf(t)
		if err == nil {
			_, err = a.Verify()
		}
		if err != nil {
			// The store was changed behind pactum's back.
			return nil, task.Errorf(task.CodeContractViolation, "negotiation %s: the accepted contract it stores does not verify: %v", t.ID, err)
		}
		v.Status, v.Accepted = StatusAccepted, a
	case task.StateFailed, task.StateCanceled, task.StateDeadLetter:
		v.Status, v.Reason = StatusRejected, t.Reason
	default:
		v.Status = StatusProposed
	}
	return v, nil
}

// DefaultWait bounds how long Propose and Answer wait for the provider's
// decision unless Service.Wait says otherwise.
const DefaultWait = 30 * time.Second

// Service is the negotiation of one agent's contracts over a
// Coordinator: what the HTTP endpoints, the MCP tools and library code
// call. Every call runs as the caller in its context (task.WithCaller):
// a negotiation is the proposer's task, seen only by it.
type Service struct {
	Coordinator *task.Coordinator
	Provider    *Provider
	// Wait bounds how long a move waits for the provider's answer
	// (default DefaultWait); a move not yet answered by then is returned
	// with status proposed, for the caller to read again (Get).
	Wait time.Duration
}

// Validate reports what the agent says of a contract (Capability.Validate).
func (s *Service) Validate(data []byte) Report { return s.Provider.Validate(data) }

// Propose opens a negotiation with the proposal m (action propose) and
// returns it once the provider has answered (or Wait has passed). A
// proposal that cannot stand (an invalid contract, a bad signature) is
// refused with CodeInvalidArgument, nothing stored.
func (s *Service) Propose(ctx context.Context, m *Move) (*View, error) {
	if err := m.check(); err != nil {
		return nil, task.Errorf(task.CodeInvalidArgument, "%v", err)
	}
	if m.Action != ActionPropose {
		return nil, task.Errorf(task.CodeInvalidArgument, "a negotiation opens with a propose move, not %s", m.Action)
	}
	if s.Provider.Key == nil {
		return nil, task.Errorf(task.CodeUnsupported, "%v", ErrNoKey)
	}
	msg, err := m.Message(task.RoleUser)
	if err != nil {
		return nil, err
	}
	if _, err := replay([]task.Message{msg}); err != nil {
		return nil, task.Errorf(task.CodeInvalidArgument, "proposal: %v", err)
	}
	msg.Parts = append([]task.Part{task.TextPart("contract proposal")}, msg.Parts...)
	actor, err := task.ResolveActor("", task.Caller(ctx))
	if err != nil {
		return nil, err
	}
	name := Agent(s.Provider.Agent)
	wctx, cancel := context.WithTimeout(ctx, s.wait())
	defer cancel()
	res, err := s.Coordinator.SubmitAndWait(wctx, task.SubmitRequest{Agent: name,
		Envelope: task.Envelope{Actor: actor, Action: name, Input: msg}})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	if res == nil {
		return nil, err
	}
	return s.Get(ctx, res.Task.ID)
}

// Get returns negotiation id as its proposer sees it.
func (s *Service) Get(ctx context.Context, id string) (*View, error) {
	t, err := s.Coordinator.Get(ctx, id, -1)
	if err != nil {
		return nil, err
	}
	if t.Agent != Agent(s.Provider.Agent) {
		return nil, task.Errorf(task.CodeNotFound, "agent %s has no negotiation %s", s.Provider.Agent, id)
	}
	return ViewOf(t, s.Provider.Agent)
}

// Answer answers the provider's counter-proposal in negotiation id with
// m (accept, counter or reject) and returns the negotiation once the
// provider has answered (or Wait has passed). A move that cannot stand
// (a modification that does not apply or makes the contract invalid,
// naming the path; a bad signature) is refused with CodeInvalidArgument,
// nothing stored; a negotiation not waiting for an answer with
// CodeConflict.
func (s *Service) Answer(ctx context.Context, id string, m *Move) (*View, error) {
	t, err := s.Coordinator.Get(ctx, id, -1)
	if err != nil {
		return nil, err
	}
	if t.Agent != Agent(s.Provider.Agent) {
		return nil, task.Errorf(task.CodeNotFound, "agent %s has no negotiation %s", s.Provider.Agent, id)
	}
	if t.State != task.StateInputRequired {
		return nil, task.Errorf(task.CodeConflict, "negotiation %s is %s: it waits for no answer", id, t.State)
	}
	if err := m.check(); err != nil {
		return nil, task.Errorf(task.CodeInvalidArgument, "%v", err)
	}
	msg, err := m.Message(task.RoleUser)
	if err != nil {
		return nil, err
	}
	if _, err := replay(append(t.History, msg)); err != nil {
		return nil, task.Errorf(task.CodeInvalidArgument, "%s: %v", m.Action, err)
	}
	msg.Parts = append([]task.Part{task.TextPart(string(m.Action))}, msg.Parts...)
	if _, err := s.Coordinator.Continue(ctx, id, msg); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, s.wait())
	defer cancel()
	if _, err := s.Coordinator.Wait(wctx, id); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	return s.Get(ctx, id)
}

func (s *Service) wait() time.Duration {
	if s.Wait > 0 {
		return s.Wait
	}
	return DefaultWait
}
