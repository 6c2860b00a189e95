package cardsig_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pactum/pactum/cardsig"
)

// card is a small A2A 1.0 card, as pactum serves one.
const card = `{"name":"echo","description":"Replies with the text it receives.","version":"0.0.0",
 "supportedInterfaces":[{"url":"http://127.0.0.1:9000/agents/echo","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
 "capabilities":{"streaming":true,"pushNotifications":true,
  "extensions":[{"uri":"https://pactum.dev/ext/trust-model/v1","params":{"authentication":"none","limit":2.50}}]},
 "defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
 "skills":[{"id":"echo","name":"echo","description":"é ✓ 𝄞","tags":["pactum"]}]}`

// pemKey returns the PKCS #8 PEM of a private key.
func pemKey(t testing.TB, priv any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// newKey returns a fresh signing key of alg.
func newKey(t testing.TB, kid, alg string) *cardsig.Key {
	t.Helper()
	k, _, err := cardsig.GenerateKey(kid, alg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// jwksResolver resolves kids from the JWKS a Signer publishes.
func jwksResolver(t testing.TB, s *cardsig.Signer) cardsig.Resolver {
	t.Helper()
	keys, err := cardsig.ParseKeys(s.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	return func(_ context.Context, kid, _ string) ([]jose.JSONWebKey, error) { return keys, nil }
}

// verified reports the kids whose signatures verify and the errors of
// those that do not.
func verified(t testing.TB, signed []byte, resolve cardsig.Resolver) (ok []string, failed []error) {
	t.Helper()
	results, err := cardsig.Verify(context.Background(), signed, resolve)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	for _, r := range results {
		if r.Err == nil {
			ok = append(ok, r.Header.KID)
		} else {
			failed = append(failed, r.Err)
		}
	}
	return ok, failed
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	for _, alg := range cardsig.Algorithms {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			s, err := cardsig.NewSigner(newKey(t, "k-"+alg, alg))
			if err != nil {
				t.Fatal(err)
			}
			signed, err := s.Sign([]byte(card), "https://agents.example.com/.well-known/jwks.json")
			if err != nil {
				t.Fatal(err)
			}
			ok, failed := verified(t, signed, jwksResolver(t, s))
			if len(ok) != 1 || ok[0] != "k-"+alg || len(failed) != 0 {
				t.Fatalf("verified %v, failed %v; want k-%s alone", ok, failed, alg)
			}
			// The protected header names alg, kid, typ and jku.
			var c struct{ Signatures []struct{ Protected string } }
			if err := json.Unmarshal(signed, &c); err != nil {
				t.Fatal(err)
			}
			raw, err := base64.RawURLEncoding.DecodeString(c.Signatures[0].Protected)
			if err != nil {
				t.Fatal(err)
			}
			var h map[string]any
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"alg": alg, "kid": "k-" + alg, "typ": "JOSE", "jku": "https://agents.example.com/.well-known/jwks.json"}
			for k, v := range want {
				if h[k] != v {
					t.Errorf("protected header %s = %v, want %v (header %s)", k, h[k], v, raw)
				}
			}
			// Re-signing replaces the signatures instead of signing them.
			again, err := s.Sign(signed, "")
			if err != nil {
				t.Fatal(err)
			}
			if ok, failed := verified(t, again, jwksResolver(t, s)); len(ok) != 1 || len(failed) != 0 {
				t.Fatalf("re-signed: verified %v, failed %v", ok, failed)
			}
		})
	}
}

// TestPayload: what is signed is the RFC 8785 form of the card without
// its signatures: members sorted, no whitespace, numbers as ECMAScript
// writes them, non-ASCII text as UTF-8.
func TestPayload(t *testing.T) {
	t.Parallel()
	p, err := cardsig.Payload([]byte(`{"b":[1.50,1e2,"é"],"a":{"y":true,"x":null},"signatures":[{"protected":"x","signature":"y"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{"x":null,"y":true},"b":[1.5,100,"é"]}`; string(p) != want {
		t.Fatalf("Payload = %s, want %s", p, want)
	}
	for _, bad := range []string{``, `[]`, `null`, `"card"`, `{"a":}`} {
		if _, err := cardsig.Payload([]byte(bad)); err == nil {
			t.Errorf("Payload(%q) = nil error, want one", bad)
		}
	}
}

// TestTamper: changing any member of a signed card, at any depth, breaks
// every signature; reformatting it (order, whitespace, number spelling)
// does not.
func TestTamper(t *testing.T) {
	t.Parallel()
	s, err := cardsig.NewSigner(newKey(t, "ed", cardsig.AlgEdDSA), newKey(t, "ec", cardsig.AlgES256))
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign([]byte(card), "")
	if err != nil {
		t.Fatal(err)
	}
	var base map[string]any
	if err := json.Unmarshal(signed, &base); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(c map[string]any)) []byte {
		var c map[string]any
		if err := json.Unmarshal(signed, &c); err != nil {
			t.Fatal(err)
		}
		f(c)
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	obj := func(v any) map[string]any { return v.(map[string]any) }
	arr := func(v any) []any { return v.([]any) }
	for _, tc := range []struct {
		name  string
		card  []byte
		holds bool
	}{
		{"name", edit(func(c map[string]any) { c["name"] = "evil" }), false},
		{"description", edit(func(c map[string]any) { c["description"] = c["description"].(string) + " " }), false},
		{"interface url", edit(func(c map[string]any) {
			obj(arr(c["supportedInterfaces"])[0])["url"] = "https://evil.example.com/agents/echo"
		}), false},
		{"capability", edit(func(c map[string]any) { obj(c["capabilities"])["streaming"] = false }), false},
		{"extension param", edit(func(c map[string]any) {
			obj(obj(arr(obj(c["capabilities"])["extensions"])[0])["params"])["authentication"] = "bearer"
		}), false},
		{"number", edit(func(c map[string]any) {
			obj(obj(arr(obj(c["capabilities"])["extensions"])[0])["params"])["limit"] = 2.51
		}), false},
		{"skill tag", edit(func(c map[string]any) { obj(arr(c["skills"])[0])["tags"] = []any{"pactum", "x"} }), false},
		{"member added", edit(func(c map[string]any) { c["provider"] = map[string]any{"organization": "evil"} }), false},
		{"empty member added", edit(func(c map[string]any) { c["documentationUrl"] = "" }), false},
		{"member removed", edit(func(c map[string]any) { delete(c, "version") }), false},
		{"skills reordered", edit(func(c map[string]any) {
			c["skills"] = append(arr(c["skills"]), map[string]any{"id": "b", "name": "b", "description": "b", "tags": []any{}})
			s := arr(c["skills"])
			s[0], s[1] = s[1], s[0]
		}), false},
		{"reformatted", []byte(strings.ReplaceAll(string(edit(func(map[string]any) {})), ",", " ,\n ")), true},
		{"number spelled differently", respell(t, signed), true},
		{"unchanged", signed, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, failed := verified(t, tc.card, jwksResolver(t, s))
			if tc.holds && (len(ok) != 2 || len(failed) != 0) {
				t.Fatalf("verified %v, failed %v; want both signatures to hold", ok, failed)
			}
			if !tc.holds && (len(ok) != 0 || len(failed) != 2) {
				t.Fatalf("verified %v, failed %v; want both signatures to fail", ok, failed)
			}
		})
	}
}

// respell writes the card's 2.50 as 25e-1.
func respell(t *testing.T, signed []byte) []byte {
	t.Helper()
	out := strings.Replace(string(signed), `"limit":2.50`, `"limit":25e-1`, 1)
	if out == string(signed) {
		t.Fatalf("no limit 2.50 in %s", signed)
	}
	return []byte(out)
}

// TestRotation: a card signed by two keys verifies with either alone, so
// a verifier that knows only the old or only the new key accepts it.
func TestRotation(t *testing.T) {
	t.Parallel()
	old, next := newKey(t, "2026-01", cardsig.AlgES256), newKey(t, "2026-07", cardsig.AlgEdDSA)
	s, err := cardsig.NewSigner(old, next)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.KIDs(), ","); got != "2026-01,2026-07" {
		t.Fatalf("KIDs = %s", got)
	}
	signed, err := s.Sign([]byte(card), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []*cardsig.Key{old, next} {
		only := func(_ context.Context, kid, _ string) ([]jose.JSONWebKey, error) {
			if kid != k.KID() {
				return nil, cardsig.ErrNoKey
			}
			jwk := k.JWK()
			return []jose.JSONWebKey{jwk.Public()}, nil
		}
		ok, failed := verified(t, signed, only)
		if len(ok) != 1 || ok[0] != k.KID() || len(failed) != 1 || !errors.Is(failed[0], cardsig.ErrNoKey) {
			t.Errorf("knowing only %s: verified %v, failed %v", k.KID(), ok, failed)
		}
	}
	if _, err := cardsig.NewSigner(old, newKey(t, "2026-01", cardsig.AlgEdDSA)); err == nil {
		t.Error("NewSigner accepted two keys with one kid")
	}
}

// TestVerifyRefuses: unsigned cards, algorithms outside EdDSA and ES256
// (none, HMAC), a kid without a key and a key of the wrong type are each
// refused.
func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	ed := newKey(t, "k", cardsig.AlgEdDSA)
	s, err := cardsig.NewSigner(ed)
	if err != nil {
		t.Fatal(err)
	}
	for _, unsigned := range []string{card, `{"name":"x","signatures":[]}`, `{"name":"x","signatures":null}`} {
		if _, err := cardsig.Verify(context.Background(), []byte(unsigned), jwksResolver(t, s)); !errors.Is(err, cardsig.ErrUnsigned) {
			t.Errorf("Verify(unsigned) = %v, want ErrUnsigned", err)
		}
	}
	payload, err := cardsig.Payload([]byte(card))
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	// An HMAC signature made with the public key's bytes as the secret:
	// the classic algorithm-confusion attack.
	hs, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(ed.JWK().Key.(ed25519.PublicKey))},
		(&jose.SignerOptions{}).WithHeader("kid", "k"))
	if err != nil {
		t.Fatal(err)
	}
	hsJWS, err := hs.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	hsCompact, _ := hsJWS.DetachedCompactSerialize()
	hsProt, hsSig, _ := strings.Cut(hsCompact, "..")
	withSig := func(protected, signature string) []byte {
		var c map[string]any
		if err := json.Unmarshal([]byte(card), &c); err != nil {
			t.Fatal(err)
		}
		c["signatures"] = []any{map[string]any{"protected": protected, "signature": signature}}
		out, _ := json.Marshal(c)
		return out
	}
	ecOnly := func(context.Context, string, string) ([]jose.JSONWebKey, error) {
		jwk := newKey(t, "k", cardsig.AlgES256).JWK()
		jwk.Algorithm = ""
		return []jose.JSONWebKey{jwk.Public()}, nil
	}
	signed, err := s.Sign([]byte(card), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		card    []byte
		resolve cardsig.Resolver
		want    string
	}{
		{"alg none", withSig(b64([]byte(`{"alg":"none","kid":"k"}`)), ""), jwksResolver(t, s), `alg "none" is not accepted`},
		{"alg HS256", withSig(hsProt, hsSig), jwksResolver(t, s), `alg "HS256" is not accepted`},
		{"alg RS256", withSig(b64([]byte(`{"alg":"RS256","kid":"k"}`)), "AAAA"), jwksResolver(t, s), `alg "RS256" is not accepted`},
		{"no kid", withSig(b64([]byte(`{"alg":"EdDSA"}`)), "AAAA"), jwksResolver(t, s), "no kid"},
		{"kid not a string", withSig(b64([]byte(`{"alg":"EdDSA","kid":7}`)), "AAAA"), jwksResolver(t, s), "must be strings"},
		{"header not base64url", withSig("***", "AAAA"), jwksResolver(t, s), "not base64url"},
		{"header not an object", withSig(b64([]byte(`[1]`)), "AAAA"), jwksResolver(t, s), "not a JSON object"},
		{"unknown critical header", withSig(b64([]byte(`{"alg":"EdDSA","kid":"k","crit":["x"],"x":1}`)), "AAAA"), jwksResolver(t, s), "critical"},
		{"no key for kid", signed, func(context.Context, string, string) ([]jose.JSONWebKey, error) { return nil, nil }, "no key"},
		{"key of another type", signed, ecOnly, "an ECDSA P-256 key cannot verify EdDSA"},
		{"garbage signature", withSig(b64([]byte(`{"alg":"EdDSA","kid":"k"}`)), "AAAA"), jwksResolver(t, s), "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, failed := verified(t, tc.card, tc.resolve)
			if len(ok) != 0 || len(failed) != 1 || !strings.Contains(failed[0].Error(), tc.want) {
				t.Fatalf("verified %v, failed %v; want one failure containing %q", ok, failed, tc.want)
			}
		})
	}
}

// TestParseKey: the file must hold a private key of the type alg signs
// with; errors say what it holds instead and never quote it.
func TestParseKey(t *testing.T) {
	t.Parallel()
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	ecPriv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaPriv, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecDER, _ := x509.MarshalECPrivateKey(ecPriv)
	sec1 := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER})
	pubDER, _ := x509.MarshalPKIXPublicKey(edPriv.Public())
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	for _, tc := range []struct {
		name, kid, alg string
		pem            []byte
		want           string // "" when it loads
	}{
		{"ed25519", "k", cardsig.AlgEdDSA, pemKey(t, edPriv), ""},
		{"p-256 pkcs8", "k", cardsig.AlgES256, pemKey(t, ecPriv), ""},
		{"p-256 sec1", "k", cardsig.AlgES256, sec1, ""},
		{"ed25519 for ES256", "k", cardsig.AlgES256, pemKey(t, edPriv), "Ed25519 key, which signs with alg EdDSA, not ES256"},
		{"p-256 for EdDSA", "k", cardsig.AlgEdDSA, pemKey(t, ecPriv), "P-256 key, which signs with alg ES256, not EdDSA"},
		{"p-384", "k", cardsig.AlgES256, pemKey(t, p384), "ES256 needs P-256"},
		{"rsa", "k", cardsig.AlgES256, pemKey(t, rsaPriv), "RSA key"},
		{"public key", "k", cardsig.AlgEdDSA, pub, `"PUBLIC KEY" is not a private key`},
		{"not PEM", "k", cardsig.AlgEdDSA, []byte("hello"), "no PEM block"},
		{"unknown alg", "k", "HS256", pemKey(t, edPriv), "not HS256"},
		{"empty kid", "", cardsig.AlgEdDSA, pemKey(t, edPriv), "kid must not be empty"},
		{"kid with space", "a b", cardsig.AlgEdDSA, pemKey(t, edPriv), "printable ASCII"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := cardsig.ParseKey(tc.kid, tc.alg, tc.pem)
			if tc.want == "" {
				if err != nil || k.KID() != tc.kid || k.Alg() != tc.alg {
					t.Fatalf("ParseKey = %v, %v", k, err)
				}
				if jwk := k.JWK(); !jwk.IsPublic() || jwk.Use != "sig" {
					t.Errorf("JWK %+v is not a public signing key", jwk)
				}
				return
			}
			if err == nil || !errors.Is(err, cardsig.ErrKey) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseKey = %v, want an ErrKey containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "BEGIN") {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
}

// TestLoadKeyPermissions: a key file others can read loads, with a
// warning; one only its owner can read loads without.
func TestLoadKeyPermissions(t *testing.T) {
	t.Parallel()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		warn bool
	}{{0o600, false}, {0o400, false}, {0o640, true}, {0o644, true}} {
		path := filepath.Join(dir, tc.mode.String()+".pem")
		if err := os.WriteFile(path, pemKey(t, priv), tc.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		k, warning, err := cardsig.LoadKey("k", cardsig.AlgEdDSA, path)
		if err != nil || k == nil {
			t.Fatalf("LoadKey(%v) = %v", tc.mode, err)
		}
		if (warning != "") != tc.warn || (tc.warn && !strings.Contains(warning, "chmod 600")) {
			t.Errorf("mode %v: warning %q, want one: %v", tc.mode, warning, tc.warn)
		}
	}
	if _, _, err := cardsig.LoadKey("k", cardsig.AlgEdDSA, filepath.Join(dir, "missing.pem")); !errors.Is(err, os.ErrNotExist) || !errors.Is(err, cardsig.ErrKey) {
		t.Errorf("LoadKey(missing) = %v, want ErrKey and ErrNotExist", err)
	}
}

// TestParseKeys: public keys come as a JWKS, a JWK or a PEM public key;
// private keys are refused.
func TestParseKeys(t *testing.T) {
	t.Parallel()
	k := newKey(t, "k", cardsig.AlgEdDSA)
	s, _ := cardsig.NewSigner(k)
	pubDER, _ := x509.MarshalPKIXPublicKey(k.JWK().Key)
	jwk, _ := json.Marshal(k.JWK())
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	privJWK, _ := json.Marshal(jose.JSONWebKey{Key: priv, KeyID: "p"})
	for _, tc := range []struct {
		name string
		data []byte
		kid  string
		bad  string
	}{
		{"jwks", s.JWKS(), "k", ""},
		{"jwk", jwk, "k", ""},
		{"pem", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), "", ""},
		{"private jwk", privJWK, "", "private key"},
		{"private jwks", []byte(`{"keys":[` + string(privJWK) + `]}`), "", "private key"},
		{"keys not a list", []byte(`{"keys":{}}`), "", "not a list"},
		{"not json", []byte(`keys`), "", "not JSON"},
		{"pem private", pemKey(t, priv), "", "PUBLIC KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := cardsig.ParseKeys(tc.data)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("ParseKeys = %v, %v; want an error containing %q", keys, err, tc.bad)
				}
				return
			}
			if err != nil || len(keys) != 1 || keys[0].KeyID != tc.kid || !keys[0].IsPublic() {
				t.Fatalf("ParseKeys = %+v, %v", keys, err)
			}
		})
	}
}

// TestJWKSPublicOnly: the published JWKS holds the public halves only.
func TestJWKSPublicOnly(t *testing.T) {
	t.Parallel()
	s, err := cardsig.NewSigner(newKey(t, "ed", cardsig.AlgEdDSA), newKey(t, "ec", cardsig.AlgES256))
	if err != nil {
		t.Fatal(err)
	}
	var set struct{ Keys []map[string]any }
	if err := json.Unmarshal(s.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 2 {
		t.Fatalf("JWKS has %d keys, want 2: %s", len(set.Keys), s.JWKS())
	}
	for _, k := range set.Keys {
		if _, ok := k["d"]; ok {
			t.Errorf("JWKS key %v has a private part d", k["kid"])
		}
		if k["use"] != "sig" || k["alg"] == nil || k["kid"] == nil {
			t.Errorf("JWKS key %v lacks use, alg or kid", k)
		}
	}
}

// TestSDKForm: a signature over the card with its empty values removed,
// as the a2a-js and a2a-python SDKs sign, verifies only when Verify is
// asked to try FormSDK, and then says so.
func TestSDKForm(t *testing.T) {
	t.Parallel()
	s, err := cardsig.NewSigner(newKey(t, "k", cardsig.AlgEdDSA))
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign([]byte(card), "")
	if err != nil {
		t.Fatal(err)
	}
	// The SDKs would have signed this card as the one without empties.
	var c map[string]any
	if err := json.Unmarshal(signed, &c); err != nil {
		t.Fatal(err)
	}
	c["documentationUrl"] = ""
	c["provider"] = map[string]any{"url": "", "organization": ""}
	c["skills"] = append(c["skills"].([]any), map[string]any{})
	c["capabilities"].(map[string]any)["extensions"].([]any)[0].(map[string]any)["params"].(map[string]any)["none"] = nil
	withEmpty, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	results, err := cardsig.Verify(context.Background(), withEmpty, jwksResolver(t, s))
	if err != nil || results[0].Err == nil {
		t.Fatalf("strict Verify of a card with empty members added = %+v, %v; want a failure", results, err)
	}
	results, err = cardsig.Verify(context.Background(), withEmpty, jwksResolver(t, s), cardsig.FormSDK)
	if err != nil || results[0].Err != nil || results[0].Form != cardsig.FormSDK {
		t.Fatalf("Verify with FormSDK = %+v, %v; want verified in the sdk form", results, err)
	}
	results, err = cardsig.Verify(context.Background(), signed, jwksResolver(t, s), cardsig.FormSDK)
	if err != nil || results[0].Err != nil || results[0].Form != cardsig.FormJCS {
		t.Fatalf("Verify of the card as signed = %+v, %v; want verified in the jcs form", results, err)
	}
	// A change that is not an empty value still breaks it.
	c["name"] = "evil"
	changed, _ := json.Marshal(c)
	if results, err := cardsig.Verify(context.Background(), changed, jwksResolver(t, s), cardsig.FormSDK); err != nil || results[0].Err == nil {
		t.Fatalf("Verify with FormSDK of a renamed card = %+v, %v; want a failure", results, err)
	}
}

// TestParseKeysSkipsUnknown: a JWKS may hold keys of types this package
// cannot read beside the signing keys; they are skipped, and a JWKS of
// none but those is an error.
func TestParseKeysSkipsUnknown(t *testing.T) {
	t.Parallel()
	k := newKey(t, "k", cardsig.AlgEdDSA)
	jwk, _ := json.Marshal(k.JWK())
	unknown := `{"kty":"XYZ","kid":"odd","x":"AAAA"}`
	keys, err := cardsig.ParseKeys([]byte(`{"keys":[` + unknown + `,` + string(jwk) + `]}`))
	if err != nil || len(keys) != 1 || keys[0].KeyID != "k" {
		t.Fatalf("ParseKeys = %+v, %v; want the one readable key", keys, err)
	}
	if _, err := cardsig.ParseKeys([]byte(`{"keys":[` + unknown + `]}`)); err == nil {
		t.Fatal("ParseKeys of unreadable keys only: no error")
	}
	if keys, err := cardsig.ParseKeys([]byte(`{"keys":[]}`)); err != nil || len(keys) != 0 {
		t.Fatalf("ParseKeys of an empty JWKS = %v, %v", keys, err)
	}
}
