package negotiation_test

import (
	"encoding/json"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/negotiation"
)

// FuzzDecodeMove feeds the decoder of every move a caller sends.
func FuzzDecodeMove(f *testing.F) {
	f.Add([]byte(`{"action":"propose","contract":{"id":"x"},"signature":"a..b"}`))
	f.Add([]byte(`{"action":"counter","modifications":[{"op":"add","path":"/a/-","value":1,"reason":"r"}]}`))
	f.Add([]byte(`{"action":"reject","reason":"no","extra":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := negotiation.DecodeMove(b)
		if err != nil {
			return
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("a decoded move does not encode: %v", err)
		}
	})
}

// FuzzApply feeds modifications (as a caller sends them) to a valid
// contract: Apply must never panic, never change its input, and return
// either an error or a contract that validates.
func FuzzApply(f *testing.F) {
	f.Add([]byte(`[{"op":"change","path":"/steps/0/agent","value":"x","reason":"r"}]`))
	f.Add([]byte(`[{"op":"add","path":"/steps/0/assertions/-","value":{"type":"assert","message":"m","check":{"type":"regex","target":"output","pattern":"x"}},"reason":"r"}]`))
	f.Add([]byte(`[{"op":"remove","path":"/steps/1/metadata/a~1b","reason":"r"}]`))
	f.Add([]byte(`[{"op":"add","path":"/steps/0","value":{},"reason":"r"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var mods []negotiation.Modification
		if json.Unmarshal(b, &mods) != nil {
			return
		}
		c, err := contract.Parse("base", []byte(base))
		if err != nil {
			t.Fatal(err)
		}
		before, _ := contract.Canonical(c)
		got, _, err := negotiation.Apply(c, mods)
		if after, _ := contract.Canonical(c); string(after) != string(before) {
			t.Fatal("Apply changed its input")
		}
		if err == nil {
			if errs := contract.Validate(got, contract.ValidateOptions{}); len(errs) > 0 {
				t.Fatalf("Apply returned an invalid contract: %v", errs)
			}
		}
	})
}

// FuzzVerify feeds accepted contracts and signatures as a store or a
// peer hands them over: only a correctly signed one verifies.
func FuzzVerify(f *testing.F) {
	a := accepted(f, newKey(f, "http://a"), newKey(f, "http://b"))
	good, _ := json.Marshal(a)
	f.Add(good, a.Parties[0].Signature)
	f.Add([]byte(`{"contract":{},"parties":[]}`), "eyJhbGciOiJFZERTQSJ9..AAAA")
	f.Fuzz(func(t *testing.T, b []byte, sig string) {
		_, _ = negotiation.VerifySignature(sig, b)
		var x negotiation.Accepted
		if json.Unmarshal(b, &x) != nil {
			return
		}
		if _, err := x.Verify(); err == nil && x.Digest != a.Digest {
			t.Fatalf("an accepted contract verified with digest %s, signed by nobody here", x.Digest)
		}
	})
}
