// Package discovery reads what an A2A agent card declares of the
// contracts its answers are verified against (pactum's contracts
// extension, a2aserver.ContractsURI) and loads those contracts by digest:
// what `pactum contract discover` prints and what an a2a agent pinned to
// its remote's contract (`contract: {remote: DIGEST}`) checks against.
package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/contract"
)

// MaxContractBytes bounds a contract read from its URL.
const MaxContractBytes = 4 << 20

// Declared is what a card declares of its contracts.
type Declared struct {
	// Required says callers must activate the extension.
	Required bool
	a2aserver.ContractsParams
}

// ErrNoExtension is Contracts' error for a card that does not declare the
// contracts extension.
var ErrNoExtension = errors.New("the agent card declares no contracts (no extension " + a2aserver.ContractsURI + " in capabilities.extensions)")

// Contracts returns what card declares of its contracts, ErrNoExtension
// when it declares none, or an error naming what in the extension's
// params is malformed.
func Contracts(card *a2a.AgentCard) (*Declared, error) {
	for _, e := range card.Capabilities.Extensions {
		if e.URI != a2aserver.ContractsURI {
			continue
		}
		b, err := json.Marshal(e.Params)
		if err != nil {
			return nil, fmt.Errorf("extension %s: params: %w", e.URI, err)
		}
		d := &Declared{Required: e.Required}
		if err := json.Unmarshal(b, &d.ContractsParams); err != nil {
			return nil, fmt.Errorf("extension %s: params: %w", e.URI, err)
		}
		for i, c := range d.Contracts {
			if c.ID == "" || c.Digest == "" {
				return nil, fmt.Errorf("extension %s: params.contracts[%d]: id and digest are required", e.URI, i)
			}
			if len(c.Contract) == 0 && c.URL == "" {
				return nil, fmt.Errorf("extension %s: params.contracts[%d] (%s): neither the contract nor its url", e.URI, i, c.ID)
			}
		}
		return d, nil
	}
	return nil, ErrNoExtension
}

// Find returns the contract d declares with digest, or an error listing
// the ones it declares.
func (d *Declared) Find(digest string) (a2aserver.ContractRef, error) {
	var have []string
	for _, c := range d.Contracts {
		if c.Digest == digest {
			return c, nil
		}
		have = append(have, c.ID+" "+c.Digest)
	}
	return a2aserver.ContractRef{}, fmt.Errorf("the agent card declares no contract with digest %s (it declares: %v)", digest, have)
}

// Fetch GETs a JSON document at url with client (nil:
// http.DefaultClient) and returns its body: at most max bytes, refusing
// any status but 200. It reads what a card names (a contract, a JWKS) and
// cards themselves.
func Fetch(ctx context.Context, client *http.Client, url string, max int64) ([]byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", url, max)
	}
	return b, nil
}

// Load returns the contract ref names, and where it was read from: the
// contract embedded in the card, else the document at its URL read by
// fetch. Its canonical form (contract.Canonical) must have the digest
// the card names: a contract that does not is refused, whatever it says.
func Load(ctx context.Context, ref a2aserver.ContractRef, fetch func(ctx context.Context, url string) ([]byte, error)) (*contract.AgentContract, string, error) {
	data, from := []byte(ref.Contract), "embedded in the card"
	if len(data) == 0 {
		b, err := fetch(ctx, ref.URL)
		if err != nil {
			return nil, "", fmt.Errorf("contract %s: %w", ref.ID, err)
		}
		data, from = b, ref.URL
	}
	c, err := contract.Parse(ref.ID+".json", data)
	if err != nil {
		return nil, "", &RefusedError{fmt.Errorf("contract %s (%s): %w", ref.ID, from, err)}
	}
	got, err := contract.Digest(c)
	if err != nil {
		return nil, "", &RefusedError{err}
	}
	if got != ref.Digest {
		return nil, "", &RefusedError{fmt.Errorf("contract %s (%s): its canonical form has digest %s, not the %s the card names: refused", ref.ID, from, got, ref.Digest)}
	}
	return c, from, nil
}

// RefusedError is Load's error for a contract that was read but is not
// the one the card names: it does not parse as a contract, or its digest
// differs. Reading it again will not help; an error of another type (the
// contract's URL could not be read) may.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Digest returns the sha256 digest of data as cards write it.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
