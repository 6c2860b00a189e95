package negotiation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// Provider is the provider's side of negotiations with one agent: what
// the agent can honour and the node's signing key.
type Provider struct {
	Capability
	// Key signs what the provider offers and accepts; nil: the node has
	// no signing key, and every negotiation is refused.
	Key *Key
	// MaxRounds bounds the proposer's proposals (default
	// DefaultMaxRounds).
	MaxRounds int
}

// ErrNoKey is the reason a node without a signing key refuses to
// negotiate.
var ErrNoKey = errors.New("this node has no signing key, so it cannot negotiate: set negotiation.signing_key_file in its configuration")

// Runner returns the provider's decision logic: the runner of the
// negotiation agent (Agent(name)). Each turn it rebuilds the negotiation
// from the task's history (it keeps nothing between calls, so a
// negotiation resumes after a crash) and answers the proposer's newest
// move:
//
//   - a proposal (the first, or a counter-proposal) is checked (the
//     contract valid, the proposer's signature over it) and decided as
//     Capability says: accepted (the task succeeds with the Accepted
//     contract, signed by both, as its artifact AcceptedArtifact),
//     countered (the task waits in input_required, its status message the
//     counter move with the provider's signature) or rejected (the task
//     fails with the reasons, code contract_violation);
//   - accept ends it accepted, with the proposer's signature over the
//     provider's counter-proposal;
//   - reject ends it failed with the proposer's reason.
//
// A move that cannot stand (a bad signature, a modification that does not
// apply or makes the contract invalid) refuses that round: the task waits
// for input again, the provider's offer standing, the refusal as its
// reason. An invalid first proposal is rejected.
func (p *Provider) Runner() task.Runner {
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		return p.run(req)
	})
}

// reject is the error that ends a negotiation rejected.
func reject(format string, args ...any) error {
	return task.Permanent(task.Errorf(task.CodeContractViolation, format, args...))
}

func (p *Provider) run(req *task.Request) (*task.Result, error) {
	if p.Key == nil {
		return nil, task.Permanent(task.Errorf(task.CodeUnsupported, "%v", ErrNoKey))
	}
	s, err := replay(req.History)
	switch {
	case err != nil && s.offer != nil && s.byProvider:
		// The proposer's answer did not stand: the offer stands.
		return p.counter(s.offer, s.offerSig, nil, "your move was refused: "+err.Error()+"; my offer stands")
	case err != nil:
		return nil, reject("proposal refused: %v", err)
	}
	switch s.last.Action {
	case ActionReject:
		return nil, reject("rejected by the proposer: %s", cmp.Or(s.last.Reason, "no reason given"))
	case ActionAccept:
		return p.accepted(req.TaskID, s.offer, s.proposer.Signature, s.offerSig)
	}
	if !s.byProvider {
		max := p.MaxRounds
		if max <= 0 {
			max = DefaultMaxRounds
		}
		if s.rounds > max {
			return nil, reject("%d proposals and no agreement: a negotiation has at most %d", s.rounds, max)
		}
		d := p.decide(s.offer)
		switch {
		case d.accept:
			canonical, err := contract.Canonical(s.offer.Contract())
			if err != nil {
				return nil, err
			}
			sig, err := p.Key.Sign(canonical, RoleProvider)
			if err != nil {
				return nil, err
			}
			return p.accepted(req.TaskID, s.offer, s.offerSig, sig)
		case d.reject != "":
			return nil, reject("%s", d.reject)
		}
		c, _, err := Apply(s.offer.Contract(), d.mods)
		if err != nil {
			return nil, err // decide applied them already
		}
		canonical, err := contract.Canonical(c)
		if err != nil {
			return nil, err
		}
		sig, err := p.Key.Sign(canonical, RoleProvider)
		if err != nil {
			return nil, err
		}
		_, compiled, err := parseContract(canonical)
		if err != nil {
			return nil, err
		}
		return p.counter(compiled, sig, d.mods, "")
	}
	// The newest move is the provider's own (a turn run again): ask again.
	return p.counter(s.offer, s.offerSig, s.mods, s.reason)
}

// counter is the result that counter-proposes offer (signed by the
// provider with sig): the task waits for the proposer's answer.
func (p *Provider) counter(offer *contract.Compiled, sig string, mods []Modification, reason string) (*task.Result, error) {
	canonical, err := contract.Canonical(offer.Contract())
	if err != nil {
		return nil, err
	}
	m := Move{Action: ActionCounter, Contract: canonical, Modifications: mods, Signature: sig, Reason: reason}
	msg, err := m.Message(task.RoleAgent)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("counter-proposal: contract %s with %d modifications; answer with accept, counter or reject", offer.Digest(), len(mods))
	if reason != "" {
		text = reason
	}
	msg.Parts = append([]task.Part{task.TextPart(text)}, msg.Parts...)
	// The reason is in the transition's record, and so in the audit chain.
	why := fmt.Sprintf("counter-proposal: contract %s, %d modifications", offer.Digest(), len(mods))
	if reason != "" {
		why = "proposer's move refused; offer " + offer.Digest() + " stands"
	}
	return &task.Result{InputRequired: true, Message: &msg, Reason: why}, nil
}

// accepted is the result that ends the negotiation with offer accepted:
// proposerSig and providerSig are both parties' signatures over it.
func (p *Provider) accepted(id string, offer *contract.Compiled, proposerSig, providerSig string) (*task.Result, error) {
	canonical, err := contract.Canonical(offer.Contract())
	if err != nil {
		return nil, err
	}
	a := &Accepted{Negotiation: id, Agent: p.Agent, Contract: canonical, Digest: offer.Digest()}
	for _, sig := range []string{proposerSig, providerSig} {
		party, err := VerifySignature(sig, canonical)
		if err != nil {
			return nil, reject("accept: %v", err)
		}
		a.Parties = append(a.Parties, party)
	}
	if _, err := a.Verify(); err != nil {
		return nil, reject("%v", err)
	}
	if a.Parties[1].Key != p.Key.Thumbprint {
		return nil, reject("accept: the provider's signature is not this node's")
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("accepted: contract %s %s, signed by the proposer %s and the provider %s", offer.Contract().ID, a.Digest, a.Parties[0].Key, a.Parties[1].Key)
	msg := task.Message{ID: task.NewID(), Role: task.RoleAgent, Parts: []task.Part{task.TextPart(text)}}
	return &task.Result{
		Artifacts: []task.Artifact{{ID: AcceptedArtifact, Name: AcceptedArtifact, Parts: []task.Part{task.DataPart(b)}}},
		Message:   &msg, Reason: text,
	}, nil
}

// AcceptedOf returns the accepted contract a negotiation's task holds
// (its artifact AcceptedArtifact), not yet verified (Accepted.Verify).
func AcceptedOf(t *task.Task) (*Accepted, error) {
	for _, art := range t.Artifacts {
		if art.ID != AcceptedArtifact {
			continue
		}
		for _, part := range art.Parts {
			if part.Kind != task.PartData {
				continue
			}
			var a Accepted
			if err := decodeStrict(part.Data, &a); err != nil {
				return nil, fmt.Errorf("accepted contract of negotiation %s: %w", t.ID, err)
			}
			return &a, nil
		}
	}
	return nil, fmt.Errorf("negotiation %s holds no accepted contract", t.ID)
}
