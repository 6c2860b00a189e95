package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/contract"
)

const doc = `{"version":"1.0","id":"greet","steps":[{"id":"greet","assertions":[{"type":"assert","message":"says hello","check":{"type":"contains","value":"hello"}}]}]}`

func canonical(t *testing.T) (json.RawMessage, string) {
	t.Helper()
	c, err := contract.Parse("greet.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := contract.Canonical(c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := contract.Digest(c)
	if err != nil {
		t.Fatal(err)
	}
	if d != Digest(b) {
		t.Fatalf("contract.Digest %s, Digest of the canonical bytes %s", d, Digest(b))
	}
	return b, d
}

func card(params any, required bool) *a2a.AgentCard {
	var p map[string]any
	b, _ := json.Marshal(params)
	_ = json.Unmarshal(b, &p)
	return &a2a.AgentCard{Name: "greeter", Capabilities: a2a.AgentCapabilities{Extensions: []a2a.AgentExtension{
		{URI: "https://example.com/other/v1"},
		{URI: a2aserver.ContractsURI, Required: required, Params: p},
	}}}
}

func TestContractsAndLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	canon, digest := canonical(t)
	tampered := json.RawMessage(strings.Replace(string(canon), "hello", "bye", 1))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good":
			_, _ = w.Write(canon)
		case "/tampered":
			_, _ = w.Write(tampered)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	fetch := func(ctx context.Context, url string) ([]byte, error) {
		return Fetch(ctx, srv.Client(), url, MaxContractBytes)
	}

	if _, err := Contracts(&a2a.AgentCard{Name: "plain"}); !errors.Is(err, ErrNoExtension) {
		t.Errorf("a card without the extension: %v, want ErrNoExtension", err)
	}
	if _, err := Contracts(card(map[string]any{"contracts": []any{map[string]any{"id": "x"}}}, false)); err == nil || !strings.Contains(err.Error(), "params.contracts[0]: id and digest are required") {
		t.Errorf("a contract without a digest: %v", err)
	}
	if _, err := Contracts(card(map[string]any{"contracts": "no"}, false)); err == nil || !strings.Contains(err.Error(), "params") {
		t.Errorf("malformed params: %v", err)
	}

	for _, tc := range []struct {
		name    string
		ref     a2aserver.ContractRef
		from    string
		refused string // "" when it loads; else a part of the refusal
		other   bool   // a retryable error, not a refusal
	}{
		{name: "embedded", ref: a2aserver.ContractRef{ID: "greet", Digest: digest, Contract: canon, URL: srv.URL + "/tampered"}, from: "embedded in the card"},
		{name: "fetched", ref: a2aserver.ContractRef{ID: "greet", Digest: digest, URL: srv.URL + "/good"}, from: srv.URL + "/good"},
		{name: "embedded, tampered", ref: a2aserver.ContractRef{ID: "greet", Digest: digest, Contract: tampered}, refused: "not the " + digest + " the card names"},
		{name: "fetched, tampered", ref: a2aserver.ContractRef{ID: "greet", Digest: digest, URL: srv.URL + "/tampered"}, refused: "not the " + digest + " the card names"},
		{name: "not a contract", ref: a2aserver.ContractRef{ID: "greet", Digest: digest, Contract: json.RawMessage(`{"nope":1}`)}, refused: "nope"},
		{name: "gone", ref: a2aserver.ContractRef{ID: "greet", Digest: digest, URL: srv.URL + "/gone"}, other: true},
	} {
		d, err := Contracts(card(a2aserver.ContractsParams{Contracts: []a2aserver.ContractRef{tc.ref}}, true))
		if err != nil || !d.Required {
			t.Fatalf("%s: Contracts: %v (required %v)", tc.name, err, d != nil && d.Required)
		}
		ref, err := d.Find(digest)
		if err != nil {
			t.Fatalf("%s: Find: %v", tc.name, err)
		}
		c, from, err := Load(ctx, ref, fetch)
		var re *RefusedError
		switch {
		case tc.other:
			if err == nil || errors.As(err, &re) {
				t.Errorf("%s: %v, want an error that is not a refusal", tc.name, err)
			}
		case tc.refused != "":
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("%s: %v, want a refusal naming %q", tc.name, err, tc.refused)
			}
		case err != nil || c.ID != "greet" || from != tc.from:
			t.Errorf("%s: %v, %v from %q; want greet from %q", tc.name, err, c, from, tc.from)
		}
	}
	d, _ := Contracts(card(a2aserver.ContractsParams{Contracts: []a2aserver.ContractRef{{ID: "greet", Digest: digest, URL: "u"}}}, false))
	if _, err := d.Find("sha256:00"); err == nil || !strings.Contains(err.Error(), "greet "+digest) {
		t.Errorf("Find of another digest: %v, want the declared ones named", err)
	}
}

// FuzzContracts feeds arbitrary extension params (what a remote card
// declares) to Contracts and Load of embedded contracts: never a panic,
// and a contract that loads has the digest the card names.
func FuzzContracts(f *testing.F) {
	f.Add([]byte(`{"contracts":[{"id":"greet","digest":"sha256:00","contract":` + doc + `}]}`))
	f.Add([]byte(`{"contracts":[{"id":"a","digest":"d","url":"u"}],"produces":["file"]}`))
	f.Add([]byte(`{"contracts":[{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p map[string]any
		if json.Unmarshal(data, &p) != nil {
			return
		}
		d, err := Contracts(&a2a.AgentCard{Capabilities: a2a.AgentCapabilities{Extensions: []a2a.AgentExtension{{URI: a2aserver.ContractsURI, Params: p}}}})
		if err != nil {
			return
		}
		for _, ref := range d.Contracts {
			c, _, err := Load(context.Background(), ref, func(context.Context, string) ([]byte, error) { return nil, errors.New("no fetch") })
			if err != nil {
				continue
			}
			if got, _ := contract.Digest(c); got != ref.Digest {
				t.Fatalf("loaded a contract with digest %s for %s", got, ref.Digest)
			}
		}
	})
}
