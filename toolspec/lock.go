package toolspec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/gowebpki/jcs"
)

// DefaultLockFile is the lock file's name when none is given.
const DefaultLockFile = "pactum-toolspec.lock.json"

// LockVersion is the lock file format version this package writes and
// reads.
const LockVersion = 1

// ErrLock is wrapped by every error about a malformed or inconsistent
// lock file.
var ErrLock = errors.New("toolspec lock")

// Lock records a catalogue at one point in time: each adapter contract's
// version, the SHA-256 of its canonical form, and the canonical contract
// itself. Keeping the contracts (not only their hashes) lets `pactum
// toolspec verify` classify every change against the lock anywhere, with
// no git history.
type Lock struct {
	Version  int                      `json:"version"`
	Adapters map[string]LockedAdapter `json:"adapters"`
	// Live holds the contracts of the configured MCP servers (the tools
	// each `mcp` agent's server listed when the lock was written), by
	// LiveAdapterID: what `pactum toolspec verify --live` compares the
	// servers with. They are kept apart from the catalogue's contracts,
	// which `verify` compares with the catalogue in use.
	Live map[string]LockedAdapter `json:"live,omitempty"`
}

// LiveAdapterID is the adapter id under which a lock records the contract
// of the MCP server an `mcp` agent calls: "mcp-" and the agent's name.
func LiveAdapterID(agent string) string { return LiveAdapter + "-" + agent }

// LockedAdapter is one adapter contract in a lock.
type LockedAdapter struct {
	Version string `json:"version"`
	// SHA256 is the lowercase hex SHA-256 of Contract's canonical form
	// (RFC 8785 JSON).
	SHA256 string `json:"sha256"`
	// Contract is the adapter contract as JSON; its canonical form is
	// what SHA256 covers (the file may indent it).
	Contract json.RawMessage `json:"contract"`
}

// Canonical returns the contract's canonical form: its JSON encoding
// canonicalized by RFC 8785 (JCS), so key order, whitespace and number
// spelling (10, 10.0, 1e1) do not change it. A missing operations map and
// an empty one are the same.
func Canonical(c AdapterContract) ([]byte, error) {
	if c.Operations == nil {
		c.Operations = map[string]Operation{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("adapter contract %q: encode: %w", c.AdapterID, err)
	}
	out, err := jcs.Transform(b)
	if err != nil {
		return nil, fmt.Errorf("adapter contract %q: canonicalize: %w", c.AdapterID, err)
	}
	return out, nil
}

// Hash returns the lowercase hex SHA-256 of the contract's canonical form.
func Hash(c AdapterContract) (string, error) {
	b, err := Canonical(c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// NewLock locks a catalogue. Two adapters with the same adapter_id are an
// error.
func NewLock(c *Catalogue) (*Lock, error) {
	l := &Lock{Version: LockVersion, Adapters: map[string]LockedAdapter{}}
	if c == nil {
		return l, nil
	}
	for _, a := range c.Adapters {
		if _, dup := l.Adapters[a.AdapterID]; dup {
			return nil, fmt.Errorf("%w: adapter %q appears twice in the catalogue", ErrLock, a.AdapterID)
		}
		e, err := lockEntry(a)
		if err != nil {
			return nil, err
		}
		l.Adapters[a.AdapterID] = e
	}
	return l, nil
}

func lockEntry(a AdapterContract) (LockedAdapter, error) {
	canon, err := Canonical(a)
	if err != nil {
		return LockedAdapter{}, err
	}
	sum := sha256.Sum256(canon)
	return LockedAdapter{Version: a.Version, SHA256: hex.EncodeToString(sum[:]), Contract: canon}, nil
}

// AddLive records the contract of an MCP server (LiveContract, with its
// LiveAdapterID) in the lock's live section, replacing one of the same id.
func (l *Lock) AddLive(c AdapterContract) error {
	e, err := lockEntry(c)
	if err != nil {
		return err
	}
	if l.Live == nil {
		l.Live = map[string]LockedAdapter{}
	}
	l.Live[c.AdapterID] = e
	return nil
}

// Catalogue returns the locked contracts as a catalogue, ordered by
// adapter_id.
func (l *Lock) Catalogue() (*Catalogue, error) { return lockedCatalogue(l.Adapters) }

// LiveCatalogue returns the locked contracts of MCP servers (the live
// section) as a catalogue, ordered by adapter id.
func (l *Lock) LiveCatalogue() (*Catalogue, error) { return lockedCatalogue(l.Live) }

func lockedCatalogue(entries map[string]LockedAdapter) (*Catalogue, error) {
	ids := make([]string, 0, len(entries))
	for id := range entries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	cat := &Catalogue{Adapters: []AdapterContract{}}
	for _, id := range ids {
		a, err := entries[id].decode(id)
		if err != nil {
			return nil, err
		}
		cat.Adapters = append(cat.Adapters, a)
	}
	return cat, nil
}

func (e LockedAdapter) decode(id string) (AdapterContract, error) {
	var a AdapterContract
	dec := json.NewDecoder(bytes.NewReader(e.Contract))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, fmt.Errorf("%w: entry %q: contract: %w", ErrLock, id, err)
	}
	return a, nil
}

// Marshal encodes the lock as an indented JSON document ending in a
// newline; the same lock always encodes to the same bytes.
func (l *Lock) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%w: encode: %w", ErrLock, err)
	}
	return append(b, '\n'), nil
}

// DecodeLock reads a lock file and checks it: the format version, every
// entry's contract decodes, names the adapter it is filed under and the
// version it records, and hashes to its sha256. A lock edited by hand so
// that these disagree is refused (write locks with `pactum toolspec
// lock`).
func DecodeLock(data []byte) (*Lock, error) {
	var l Lock
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLock, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the lock object", ErrLock)
	}
	if l.Version != LockVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrLock, l.Version, LockVersion)
	}
	if l.Adapters == nil {
		return nil, fmt.Errorf("%w: no adapters object", ErrLock)
	}
	for _, entries := range []map[string]LockedAdapter{l.Adapters, l.Live} {
		if err := checkEntries(entries); err != nil {
			return nil, err
		}
	}
	return &l, nil
}

// checkEntries checks that every entry's contract decodes, names the id
// it is filed under and the version it records, and hashes to its sha256.
func checkEntries(entries map[string]LockedAdapter) error {
	for id, e := range entries {
		a, err := e.decode(id)
		if err != nil {
			return err
		}
		if a.AdapterID != id {
			return fmt.Errorf("%w: entry %q holds the contract of adapter %q", ErrLock, id, a.AdapterID)
		}
		if e.Version != a.Version {
			return fmt.Errorf("%w: entry %q: version %q, but its contract says %q", ErrLock, id, e.Version, a.Version)
		}
		sum, err := Hash(a)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrLock, err)
		}
		if sum != e.SHA256 {
			return fmt.Errorf("%w: entry %q: sha256 %s does not match its contract (%s); was the lock edited by hand?", ErrLock, id, e.SHA256, sum)
		}
	}
	return nil
}

// Drifted returns the adapter_ids whose contract in the catalogue differs
// from the lock (hash or presence), sorted. Classify says how.
func (l *Lock) Drifted(c *Catalogue) ([]string, error) {
	cur := adaptersByID(c)
	var ids []string
	for id, a := range cur {
		e, ok := l.Adapters[id]
		if !ok {
			ids = append(ids, id)
			continue
		}
		sum, err := Hash(a)
		if err != nil {
			return nil, err
		}
		if sum != e.SHA256 {
			ids = append(ids, id)
		}
	}
	for id := range l.Adapters {
		if _, ok := cur[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}
