// Package audit verifies pactum's hash-chained audit log.
//
// Stores seal every audit entry into one linear chain (see task.Store):
// entry n carries Seq n, the Hash of entry n-1 as PrevHash, and its own Hash
// over its content and PrevHash (task.AuditEntry.ComputeHash). Verify walks
// the chain from the first entry and reports the first entry that was
// edited, inserted or removed.
//
// What a chain can prove: an entry whose content changed no longer matches
// its hash; a removed entry leaves a gap in the sequence or a PrevHash that
// names no neighbour; an inserted entry breaks the link after it. What it
// cannot: somebody who can write the database and recompute every hash from
// the tampered entry to the end, or who cuts entries off the end, leaves a
// valid chain. Keep Report.LastHash somewhere the database's writers cannot
// reach (a log shipper, a ticket, a signed note) and compare it later to
// close that gap.
package audit

import (
	"context"
	"fmt"

	"github.com/pactum/pactum/task"
)

// pageSize is how many entries Verify reads at a time.
const pageSize = 1000

// Report is the outcome of Verify.
type Report struct {
	// OK is true when every entry checked out.
	OK bool
	// Entries counts the entries read, up to and including the first bad
	// one.
	Entries int
	// FirstBad is the sequence number of the first entry found edited,
	// inserted or removed (for a removed entry, the sequence number it had);
	// 0 when OK.
	FirstBad int64
	// Problem says what is wrong with FirstBad; empty when OK.
	Problem string
	// LastSeq and LastHash describe the last entry that checked out: the
	// chain's head when OK. Record them elsewhere to detect later
	// truncation or a wholesale rewrite.
	LastSeq  int64
	LastHash string
}

// Verify walks the whole audit log of s, in pages, and checks that it is
// one unbroken chain starting at sequence 1. A broken chain is not an error:
// it is reported in the Report; the error is for failures to read.
func Verify(ctx context.Context, s task.Store) (*Report, error) {
	r := &Report{}
	var after int64
	for {
		page, err := s.AuditEntries(ctx, after, pageSize)
		if err != nil {
			return nil, fmt.Errorf("audit: verify: read entries after %d: %w", after, err)
		}
		if len(page) == 0 {
			r.OK = true
			return r, nil
		}
		for i := range page {
			e := &page[i]
			r.Entries++
			if bad, problem := check(e, r.LastSeq, r.LastHash); bad != 0 {
				r.FirstBad, r.Problem = bad, problem
				return r, nil
			}
			r.LastSeq, r.LastHash = e.Seq, e.Hash
		}
		after = page[len(page)-1].Seq
	}
}

// check verifies e against the entry before it (prevSeq 0: e is the first)
// and returns the sequence number of the bad entry and what is wrong, or 0.
func check(e *task.AuditEntry, prevSeq int64, prevHash string) (int64, string) {
	want := prevSeq + 1
	switch {
	case e.Seq > want:
		if e.Seq == want+1 {
			return want, fmt.Sprintf("entry %d is missing (removed): the sequence jumps from %d to %d", want, prevSeq, e.Seq)
		}
		return want, fmt.Sprintf("entries %d to %d are missing (removed): the sequence jumps from %d to %d", want, e.Seq-1, prevSeq, e.Seq)
	case e.Seq < want:
		// Stores return entries in sequence order, so this is a store bug or
		// a duplicated sequence number.
		return e.Seq, fmt.Sprintf("entry %d is out of order after entry %d (duplicated or inserted)", e.Seq, prevSeq)
	}
	if h := e.ComputeHash(); h != e.Hash {
		return e.Seq, fmt.Sprintf("entry %d was edited (or forged): its content hashes to %s, but its stored hash is %s", e.Seq, short(h), short(e.Hash))
	}
	if e.PrevHash != prevHash {
		if prevSeq == 0 {
			return e.Seq, fmt.Sprintf("entry %d does not start the chain: its previous hash is %s, want empty (entries before it were removed, or it was inserted)", e.Seq, short(e.PrevHash))
		}
		return e.Seq, fmt.Sprintf("entry %d does not follow entry %d: its previous hash is %s, but entry %d's hash is %s (inserted, or an entry between them was removed)",
			e.Seq, prevSeq, short(e.PrevHash), prevSeq, short(prevHash))
	}
	return 0, ""
}

// short abbreviates a hex hash for messages.
func short(h string) string {
	switch {
	case h == "":
		return `""`
	case len(h) > 12:
		return h[:12] + "…"
	}
	return h
}
