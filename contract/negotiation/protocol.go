package negotiation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// Action is a move of a negotiation.
type Action string

// Moves. The proposer proposes, then answers each counter-proposal with
// accept, counter or reject; the provider answers each proposal with
// accept (the negotiation ends accepted), counter or reject.
const (
	ActionPropose Action = "propose"
	ActionCounter Action = "counter"
	ActionAccept  Action = "accept"
	ActionReject  Action = "reject"
)

// MoveKey marks, in a part's metadata, the data part holding a Move.
const MoveKey = "pactum.negotiation"

// AcceptedArtifact is the id and name of the artifact of an accepted
// negotiation: the Accepted contract as a data part.
const AcceptedArtifact = "accepted-contract"

// DefaultMaxRounds bounds the proposals (the first and each counter) of
// one negotiation unless Provider.MaxRounds says otherwise.
const DefaultMaxRounds = 10

// Move is one message of a negotiation, carried as a data part.
//
//   - propose (proposer, first): Contract and the proposer's Signature
//     over its canonical form.
//   - counter: Modifications to the contract on the table, Contract the
//     contract they produce (the provider always sends it; the proposer
//     may leave it out) and the mover's Signature over it. A provider's
//     counter with a Reason and no Modifications says the proposer's
//     last move was refused and its own offer stands.
//   - accept (proposer): the proposer's Signature over the contract on
//     the table (the provider's last counter).
//   - reject: Reason.
type Move struct {
	Action        Action          `json:"action"`
	Contract      json.RawMessage `json:"contract,omitempty"`
	Modifications []Modification  `json:"modifications,omitempty"`
	Signature     string          `json:"signature,omitempty"`
	Reason        string          `json:"reason,omitempty"`
}

// Part returns m as a task data part (marked with MoveKey).
func (m *Move) Part() (task.Part, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return task.Part{}, err
	}
	p := task.DataPart(b)
	p.Metadata = map[string]any{MoveKey: string(m.Action)}
	return p, nil
}

// Message returns m as a message of role.
func (m *Move) Message(role task.Role) (task.Message, error) {
	p, err := m.Part()
	if err != nil {
		return task.Message{}, err
	}
	return task.Message{ID: task.NewID(), Role: role, Parts: []task.Part{p}}, nil
}

// DecodeMove decodes a move from JSON, refusing unknown fields and an
// unknown action.
func DecodeMove(b []byte) (*Move, error) {
	var m Move
	if err := decodeStrict(b, &m); err != nil {
		return nil, fmt.Errorf("move: %w", err)
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return &m, nil
}

// check refuses a move with an unknown action or an oversized signature.
func (m *Move) check() error {
	switch m.Action {
	case ActionPropose, ActionCounter, ActionAccept, ActionReject:
	default:
		return fmt.Errorf("move: action %q is not propose, counter, accept or reject", m.Action)
	}
	if len(m.Signature) > MaxSignature {
		return errors.New("move: signature is too long")
	}
	return nil
}

// moveOf returns the move msg carries: its first data part marked with
// MoveKey (nil when it has none).
func moveOf(msg *task.Message) (*Move, error) {
	for _, p := range msg.Parts {
		if p.Kind != task.PartData {
			continue
		}
		if _, ok := p.Metadata[MoveKey]; !ok && msg.Role == task.RoleAgent {
			continue
		}
		return DecodeMove(p.Data)
	}
	return nil, nil
}

// state is a negotiation as its history tells it.
type state struct {
	// offer is the contract on the table and offerSig its offerer's
	// signature; byProvider says the provider made it.
	offer      *contract.Compiled
	offerSig   string
	byProvider bool
	mods       []Modification
	// proposer is the key the proposer signs with (its first proposal's).
	proposer Party
	rounds   int
	// reason is why the negotiation ended, or why the last move was
	// refused.
	reason string
	// last is the newest move.
	last *Move
}

// replay rebuilds the state of a negotiation from its history, oldest
// first, without checking the provider's own moves beyond decoding them.
// The error is that of the proposer's newest move when it cannot stand;
// an earlier move that could not stand was refused by the provider's
// answer after it, and changed nothing.
func replay(history []task.Message) (*state, error) {
	s := &state{}
	var refused error // the proposer's newest move's, until the provider answers it
	for i := range history {
		msg := &history[i]
		m, err := moveOf(msg)
		if err != nil {
			if msg.Role == task.RoleAgent {
				return s, err
			}
			refused = err
			continue
		}
		if m == nil {
			continue
		}
		s.last = m
		if msg.Role == task.RoleAgent {
			refused = nil
			if err := s.provider(m); err != nil {
				return s, fmt.Errorf("the provider's move in message %s: %w", msg.ID, err)
			}
			continue
		}
		refused = s.proposerMove(m)
	}
	if refused != nil {
		return s, refused
	}
	if s.offer == nil {
		return s, errors.New("no proposal: the first message must carry a propose move")
	}
	return s, nil
}

// provider applies a move of the provider's.
func (s *state) provider(m *Move) error {
	if m.Action != ActionCounter {
		return nil
	}
	_, compiled, err := parseContract(m.Contract)
	if err != nil {
		return err
	}
	s.offer, s.offerSig, s.byProvider, s.mods = compiled, m.Signature, true, m.Modifications
	s.reason = m.Reason
	return nil
}

// proposerMove applies a move of the proposer's, checking it: the first
// is a proposal, each later one answers the provider's counter.
func (s *state) proposerMove(m *Move) error {
	first := s.offer == nil
	switch {
	case first && m.Action != ActionPropose:
		return fmt.Errorf("the first move must be propose, not %s", m.Action)
	case !first && m.Action == ActionPropose:
		return errors.New("propose opens a negotiation; answer a counter-proposal with accept, counter or reject")
	case !first && !s.byProvider:
		return fmt.Errorf("%s answers the provider's counter-proposal, and there is none yet", m.Action)
	}
	switch m.Action {
	case ActionReject:
		s.reason = m.Reason
		return nil
	case ActionAccept:
		canonical, err := contract.Canonical(s.offer.Contract())
		if err != nil {
			return err
		}
		p, err := s.signer(m.Signature, canonical)
		if err != nil {
			return err
		}
		s.proposer.Signature = p.Signature
		return nil
	}
	var compiled *contract.Compiled
	var err error
	if first {
		_, compiled, err = parseContract(m.Contract)
	} else {
		_, compiled, err = Apply(s.offer.Contract(), m.Modifications)
	}
	if err != nil {
		return err
	}
	canonical, err := contract.Canonical(compiled.Contract())
	if err != nil {
		return err
	}
	p, err := s.signer(m.Signature, canonical)
	if err != nil {
		return err
	}
	if first {
		s.proposer = p
	}
	s.offer, s.offerSig, s.byProvider, s.mods = compiled, m.Signature, false, m.Modifications
	s.rounds++
	return nil
}

// signer verifies the proposer's signature sig over canonical: it must be
// the proposer's, with the key of its first proposal.
func (s *state) signer(sig string, canonical []byte) (Party, error) {
	if sig == "" {
		return Party{}, errors.New("the move is not signed: sign the contract it offers or accepts")
	}
	p, err := VerifySignature(sig, canonical)
	if err != nil {
		return Party{}, err
	}
	if p.Role != RoleProposer {
		return Party{}, fmt.Errorf("the signature is a %s's, not the proposer's", p.Role)
	}
	if s.proposer.Key != "" && p.Key != s.proposer.Key {
		return Party{}, fmt.Errorf("signed with key %s; this negotiation's proposer signs with %s", p.Key, s.proposer.Key)
	}
	return p, nil
}

// decodeStrict decodes JSON into v refusing unknown fields and trailing
// data.
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}
