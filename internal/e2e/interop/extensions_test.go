package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/e2e/mdblock"
)

// contractsURI is pactum's contracts extension.
const contractsURI = "https://pactum.dev/ext/contracts/v1"

// TestJSClientContractsExtension runs js/extensions.mjs: the official A2A
// JavaScript client reads the contracts extension from a card, checks
// the contract it names by its digest, activates the extension and gets
// the verified result under its key (JSON-RPC and HTTP+JSON), and is
// refused by an agent that requires it when it does not activate it.
func TestJSClientContractsExtension(t *testing.T) {
	t.Parallel()
	node, jsDir := jsClient(t)
	cfg, err := filepath.Abs(filepath.Join("testdata", "contracts-extension.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := setupWith(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "extensions.mjs", srv.AgentURL("checked"), srv.AgentURL("strict"))
	cmd.Dir = jsDir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	logLines(t, out)
	if err != nil {
		t.Fatalf("node extensions.mjs: %v (see FAIL lines above)", err)
	}
	if n := bytes.Count(out, []byte("PASS ")); n != 11 {
		t.Fatalf("extensions.mjs passed %d checks, want 11", n)
	}
}

// TestContractsExtensionWire: on the wire, an activated call's answer
// names the extension in its A2A-Extensions header (X-A2A-Extensions on
// A2A 0.3), a call that does not activate it gets no such header, and the
// strict agent's refusal is the specification's ExtensionSupportRequired
// on each binding; the contract served at the card's URL is the one its
// digest names.
func TestContractsExtensionWire(t *testing.T) {
	t.Parallel()
	cfg, err := filepath.Abs(filepath.Join("testdata", "contracts-extension.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := setupWith(t, cfg)
	send := func(agent, binding string, headers map[string]string) (*http.Response, []byte) {
		t.Helper()
		msg := `{"messageId":"m-` + binding + `","role":"ROLE_USER","parts":[{"text":"hi"}]}`
		url, body := srv.AgentURL(agent), `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":`+msg+`}}`
		switch binding {
		case "rest":
			url, body = url+"/message:send", `{"message":`+msg+`}`
		case "jsonrpc03":
			body = `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m03","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`
		}
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if binding != "jsonrpc03" {
			req.Header.Set("A2A-Version", "1.0")
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, binding := range []string{"jsonrpc", "rest"} {
		resp, body := send("checked", binding, map[string]string{"A2A-Extensions": "https://example.com/other/v1, " + contractsURI})
		if got := resp.Header.Get("A2A-Extensions"); got != contractsURI {
			t.Errorf("%s: activated, A2A-Extensions answer header %q, want %q (body %s)", binding, got, contractsURI, body)
		}
		if !bytes.Contains(body, []byte(`"`+contractsURI+`":{"verifiedResult":`)) {
			t.Errorf("%s: activated, no verified result under the extension's key: %s", binding, body)
		}
		resp, body = send("checked", binding, nil)
		if got := resp.Header.Get("A2A-Extensions"); got != "" || bytes.Contains(body, []byte(contractsURI)) {
			t.Errorf("%s: not activated, header %q, body %s", binding, got, body)
		}
		resp, body = send("strict", binding, nil)
		want := `"code":-32008`
		if binding == "rest" {
			want = `"reason":"EXTENSION_SUPPORT_REQUIRED"`
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("rest: the strict agent's refusal has status %d, want 400", resp.StatusCode)
			}
		}
		if !bytes.Contains(body, []byte(want)) || !bytes.Contains(body, []byte(contractsURI)) {
			t.Errorf("%s: the strict agent's refusal %s lacks %s and the extension's URI", binding, body, want)
		}
	}
	// A2A 0.3 spells the header X-A2A-Extensions.
	resp, body := send("checked", "jsonrpc03", map[string]string{"X-A2A-Extensions": contractsURI})
	if got := resp.Header.Get("X-A2A-Extensions"); got != contractsURI {
		t.Errorf("0.3: X-A2A-Extensions answer header %q, want %q (body %s)", got, contractsURI, body)
	}

	// The contract the card names is served at its URL, with its digest.
	resp, err = http.Get(srv.AgentURL("checked") + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI    string `json:"uri"`
				Params struct {
					Contracts []struct{ Digest, URL string } `json:"contracts"`
				} `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var digest, url string
	for _, e := range card.Capabilities.Extensions {
		if e.URI == contractsURI && len(e.Params.Contracts) == 1 {
			digest, url = e.Params.Contracts[0].Digest, e.Params.Contracts[0].URL
		}
	}
	if url == "" {
		t.Fatalf("the card declares no contract under %s", contractsURI)
	}
	resp, err = http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sum := sha256.Sum256(b)
	if got := "sha256:" + hex.EncodeToString(sum[:]); resp.StatusCode != http.StatusOK || got != digest {
		t.Errorf("GET %s: %d, digest %s, the card says %s", url, resp.StatusCode, got, digest)
	}
	if resp, err := http.Get(srv.AgentURL("checked") + "/contracts/sha256:00"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown digest: %v %v, want 404", resp, err)
	} else {
		resp.Body.Close()
	}
}

// cardContract returns the digest and URL of the one contract the card
// of the agent at agentURL declares.
func cardContract(t *testing.T, agentURL string) (digest, url string) {
	t.Helper()
	resp, err := http.Get(agentURL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI    string `json:"uri"`
				Params struct {
					Contracts []struct{ Digest, URL string } `json:"contracts"`
				} `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		t.Fatal(err)
	}
	for _, e := range card.Capabilities.Extensions {
		if e.URI == contractsURI && len(e.Params.Contracts) == 1 {
			return e.Params.Contracts[0].Digest, e.Params.Contracts[0].URL
		}
	}
	t.Fatalf("the card of %s declares no contract under %s", agentURL, contractsURI)
	return "", ""
}

// TestRemoteContractPinned: pactum contract discover prints what a
// remote pactum's card declares and writes the contract, checked; a
// second pactum whose a2a agent is pinned to that contract by its digest
// (contract: {remote: DIGEST}) checks the remote's answers against it
// locally; pinned to a digest the remote does not declare, the task fails
// with contract_violation naming what it declares.
func TestRemoteContractPinned(t *testing.T) {
	t.Parallel()
	cfg, err := filepath.Abs(filepath.Join("testdata", "contracts-extension.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	remote := setupWith(t, cfg)
	digest, _ := cardContract(t, remote.AgentURL("checked"))

	// docs/a2a.md's discover command, run as written, prints what the
	// document shows (… stands for what differs from run to run).
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "a2a.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := func(name, lang string) string {
		t.Helper()
		b, err := mdblock.Extract(string(doc), "<!-- discovery-"+name+" -->", "<!-- /discovery-"+name+" -->", lang, name)
		if err != nil {
			t.Fatalf("docs/a2a.md: %v", err)
		}
		return b
	}
	const docServer = "http://127.0.0.1:9000"
	dir := t.TempDir()
	args := strings.Fields(strings.ReplaceAll(block("discover", "sh"), docServer, remote.URL))
	if len(args) < 2 || args[0] != "pactum" {
		t.Fatalf("the discover block is not a pactum command: %q", args)
	}
	cmd := exec.Command(pactumBinary(t), args[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	want := strings.Split(strings.TrimSpace(block("output", "text")), "\n")
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != len(want) {
		t.Fatalf("discover printed %d lines, the document shows %d:\n%s", len(got), len(want), out)
	}
	for i := range want {
		pattern := "^" + strings.ReplaceAll(regexp.QuoteMeta(strings.ReplaceAll(want[i], docServer, remote.URL)), "…", ".*") + "$"
		if !regexp.MustCompile(pattern).MatchString(got[i]) {
			t.Errorf("discover line %d is %q; the document shows %q", i+1, got[i], want[i])
		}
	}
	if !strings.Contains(string(out), "contract checked 1.0 "+digest) {
		t.Errorf("discover did not print the card's digest %s:\n%s", digest, out)
	}
	written := filepath.Join(dir, "contracts", "checked.contract.json")
	if out, err := exec.Command(pactumBinary(t), "contract", "check", written).CombinedOutput(); err != nil {
		t.Errorf("contract check of the discovered contract: %v\n%s", err, out)
	}
	out, err = exec.Command(pactumBinary(t), "contract", "discover", remote.URL+"/agents/echo-less").CombinedOutput()
	if err == nil {
		t.Errorf("contract discover of an agent that is not served succeeded:\n%s", out)
	}

	// docs/a2a.md's pinned agent, with the digest discover printed, and
	// the same agent pinned to a digest the remote does not declare.
	pin := block("pin", "yaml")
	pinned := regexp.MustCompile(`sha256:[0-9a-f]+…`).ReplaceAllString(strings.ReplaceAll(pin, docServer, remote.URL), digest)
	if pinned == pin || !strings.Contains(pinned, digest) {
		t.Fatalf("could not put the digest into the document's configuration:\n%s", pin)
	}
	other := "sha256:" + strings.Repeat("0", 64)
	misled := strings.ReplaceAll(strings.ReplaceAll(pinned, "name: proxy", "name: misled"), digest, other)
	misled = misled[strings.Index(misled, "  - name: misled"):]
	local := filepath.Join(dir, "local.yaml")
	if err := os.WriteFile(local, []byte(pinned+misled), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := setupWith(t, local)
	send := func(agent string) map[string]any {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-` + agent + `","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
		req, _ := http.NewRequest(http.MethodPost, srv.AgentURL(agent), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Result struct {
				Task map[string]any `json:"task"`
			} `json:"result"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out.Result.Task
	}
	task := send("proxy")
	vr, _ := dig(task, "metadata", "pactum", "verifiedResult").(map[string]any)
	if st := dig(task, "status", "state"); st != "TASK_STATE_COMPLETED" || vr == nil || vr["contractDigest"] != digest || dig(vr, "verification", "passed") != true {
		t.Errorf("the pinned agent's task: state %v, verified result %v; want completed, passed against %s", st, vr, digest)
	}
	task = send("misled")
	reason, _ := dig(task, "metadata", "pactum", "reason").(string)
	if st := dig(task, "status", "state"); st != "TASK_STATE_FAILED" || !strings.Contains(reason, "declares no contract with digest "+other) || !strings.Contains(reason, digest) {
		t.Errorf("the agent pinned to another digest: state %v, reason %q", st, reason)
	}
}

// dig returns the value at the path of keys in nested JSON objects.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
