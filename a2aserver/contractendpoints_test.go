package a2aserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pactum/pactum/a2aserver"
)

// TestContractEndpoints: an agent's validate and negotiate handlers are
// named on its card and reached below its endpoint, with the path below
// /negotiations, behind the body limit; other agents have neither.
func TestContractEndpoints(t *testing.T) {
	t.Parallel()
	type hit struct{ which, path, body string }
	hits := make(chan hit, 4)
	handler := func(which string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
				return
			}
			hits <- hit{which, r.URL.Path, string(b)}
		})
	}
	b := setup(t, func(c *setupConfig) {
		c.opts.MaxBodyBytes = 1024
		c.opts.Agents[0].Contracts = &a2aserver.ContractsInfo{Validate: handler("validate"), Negotiate: handler("negotiate")}
	})
	resp, err := http.Get(b.url + "/agents/echo/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI    string                    `json:"uri"`
				Params a2aserver.ContractsParams `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	var p a2aserver.ContractsParams
	for _, e := range card.Capabilities.Extensions {
		if e.URI == a2aserver.ContractsURI {
			p = e.Params
		}
	}
	if p.Validate != b.url+"/agents/echo/contracts/validate" || p.Negotiate != b.url+"/agents/echo/negotiations" {
		t.Fatalf("params validate %q, negotiate %q", p.Validate, p.Negotiate)
	}
	for _, tc := range []struct{ url, which, path string }{
		{p.Validate, "validate", ""},
		{p.Negotiate, "negotiate", ""},
		{p.Negotiate + "/n1", "negotiate", "/n1"},
	} {
		resp, err := http.Post(tc.url, "application/json", strings.NewReader(`{"x":1}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h := <-hits; h.which != tc.which || h.path != tc.path || h.body != `{"x":1}` {
			t.Errorf("%s reached %+v", tc.url, h)
		}
	}
	resp, err = http.Post(p.Validate, "application/json", strings.NewReader(`"`+strings.Repeat("x", 2048)+`"`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the limit: %s", resp.Status)
	}
	// /negotiationsX is not the endpoint, nor is any path of another agent.
	for _, u := range []string{b.url + "/agents/echo/negotiationsX", b.url + "/agents/slow/negotiations"} {
		resp, err := http.Post(u, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		select {
		case h := <-hits:
			t.Errorf("%s reached %+v", u, h)
		default:
		}
	}
}
