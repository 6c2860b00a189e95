package a2aserver

import (
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/a2amap"
	"github.com/pactum/pactum/task"
)

// FuzzEnvelope decodes outside input the way SendMessage does — the request
// JSON, the envelope fields under metadata.pactum, the message — and checks
// that whatever is accepted is a usable envelope that survives a JSON round
// trip unchanged (the store keeps it as JSON).
func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"pactum":{"actor":"alice","approvalRef":"APR-1","policyRef":"v1"}}},"metadata":{"pactum":{"matter":"m-7"},"trace":"x"}}`))
	f.Add([]byte(`{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"data":{"n":1}},{"url":"https://example.com/f","mediaType":"text/plain"}]}}`))
	f.Add([]byte(`{"message":{"messageId":"m3","role":"ROLE_USER","parts":[{"raw":"aGk="}],"metadata":{"pactum":{"actor":7}}}}`))
	f.Add([]byte(`{"message":{"messageId":"m4","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"pactum":"alice"}}}`))
	f.Add([]byte(`{"message":{"messageId":"m5","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"pactum":{"approvalref":"typo"}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req a2a.SendMessageRequest
		if json.Unmarshal(body, &req) != nil || req.Message == nil {
			return
		}
		msg, err := a2amap.MessageFromA2A(req.Message)
		if err != nil {
			return
		}
		em, err := readEnvelope(req.Metadata, req.Message.Metadata)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		env, err := em.envelope(msg, req.Metadata, "")
		if err != nil {
			t.Fatalf("envelope without an authenticated caller: %v", err)
		}
		if env.Actor == "" {
			t.Fatal("accepted envelope without an actor")
		}
		if env.IdempotencyKey == "" && msg.ID != "" {
			t.Fatal("idempotency key does not default to the message id")
		}
		raw, err := json.Marshal(env)
		if err != nil {
			// Metadata from JSON always re-encodes.
			t.Fatalf("encode accepted envelope: %v", err)
		}
		var back task.Envelope
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatalf("decode stored envelope: %v", err)
		}
		if back.PayloadHash() != env.PayloadHash() {
			t.Fatalf("payload hash changed across a JSON round trip:\n%s", raw)
		}
	})
}

// FuzzCancelReason decodes a CancelTask request's metadata as CancelTask
// does: a reason is accepted only from a string under metadata.pactum.reason,
// and everything else is refused with a message or ignored.
func FuzzCancelReason(f *testing.F) {
	f.Add([]byte(`{"id":"t1"}`))
	f.Add([]byte(`{"id":"t1","metadata":{"pactum":{"reason":"changed my mind"}}}`))
	f.Add([]byte(`{"id":"t1","metadata":{"pactum":{"reason":7}}}`))
	f.Add([]byte(`{"id":"t1","metadata":{"pactum":{"reson":"typo"},"other":1}}`))
	f.Add([]byte(`{"id":"t1","metadata":{"pactum":"why"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req a2a.CancelTaskRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		reason, err := readCancelReason(req.Metadata)
		if err != nil {
			if err.Error() == "" || reason != "" {
				t.Fatalf("refusal %q with reason %q", err, reason)
			}
			return
		}
		obj, _ := req.Metadata[MetadataKey].(map[string]any)
		if want, _ := obj["reason"].(string); reason != want {
			t.Fatalf("reason %q, want %q from %s", reason, want, body)
		}
	})
}
