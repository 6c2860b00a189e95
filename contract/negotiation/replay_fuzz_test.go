package negotiation

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// FuzzReplay feeds the provider's replay a valid proposal followed by an
// arbitrary answer of the proposer's, as a caller would send it: replay
// never panics, and a move that cannot stand leaves the offer as it was.
func FuzzReplay(f *testing.F) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key, _ := NewKey(priv, "http://a")
	c, _ := contract.Parse("c", []byte(`{"version":"1.0","id":"x","steps":[{"id":"s","agent":"echo"}]}`))
	canonical, _ := contract.Canonical(c)
	sig, _ := key.Sign(canonical, RoleProposer)
	digest, _ := contract.Digest(c)
	propose := Move{Action: ActionPropose, Contract: canonical, Signature: sig}
	first, _ := propose.Message(task.RoleUser)
	counter, _ := (&Move{Action: ActionCounter, Contract: canonical, Signature: sig}).Message(task.RoleAgent)
	f.Add([]byte(`{"action":"accept","signature":"` + sig + `"}`))
	f.Add([]byte(`{"action":"counter","modifications":[{"op":"change","path":"/steps/0/id","value":"t","reason":"r"}],"signature":"x"}`))
	f.Add([]byte(`{"action":"reject","reason":"no"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		answer := task.Message{Role: task.RoleUser, Parts: []task.Part{task.DataPart(json.RawMessage(b))}}
		s, err := replay([]task.Message{first, counter, answer})
		if err != nil && (s.offer == nil || s.offer.Digest() != digest) {
			t.Fatalf("a refused move changed the offer: %v", err)
		}
	})
}
