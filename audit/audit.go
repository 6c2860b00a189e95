// Package audit verifies pactum's hash-chained audit log and publishes its
// head so that it can be anchored outside the store.
//
// Stores seal every audit entry into one linear chain (see task.Store):
// entry n carries Seq n, the Hash of entry n-1 as PrevHash, and its own Hash
// over its content, its Seq and PrevHash (task.AuditEntry.ComputeHash). The
// store keeps a head record beside the chain (the last entry's Seq and
// Hash), moved in the transaction that seals.
//
// Verify reads every row of the audit table, whatever its sequence number,
// and reports the first break with the entry to blame and a Kind: an entry
// edited, inserted or removed, a duplicated or out-of-range sequence
// number, a chain that ends before its head record (truncated), or a chain
// that does not contain an anchored head (Options.Anchor). It also checks
// that every transition of the execution record has its audit entry, and
// the other way round.
//
// What each layer proves (docs/storage.md has the details and the cases):
// the chain alone catches an entry edited, inserted or removed in the
// middle; the head record also catches entries cut off the end by someone
// who does not rewrite the head record too; a head published outside the
// store (Publisher) and given back as an anchor catches any rewrite up to
// the anchored entry, even by someone with full write access to the store.
package audit

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pactum/pactum/task"
)

// pageSize is how many entries Verify reads at a time from a store that
// is not a Scanner.
const pageSize = 1000

// maxShift bounds how far Verify looks for an entry's original sequence
// number when the entries after an insertion or a removal were renumbered.
const maxShift = 64

// Scanner is implemented by stores whose whole audit table Verify can read
// (both pactum drivers). ScanAudit reads, in one read-only snapshot, the
// head record, then every row of the audit table ordered by seq and then by
// row identity (duplicates, zero and negative sequence numbers included),
// then every execution record ordered by task id and seq. head is called
// once, with found false when the store has lost its head record. An error
// a callback returns stops the scan and is returned as is.
//
// A store that is not a Scanner is verified through AuditEntries alone:
// entries with a sequence number below 1 are not seen, and there is no head
// record and no cross-check with the execution record (Report.HeadRecord
// and Report.Records are nil).
type Scanner interface {
	ScanAudit(ctx context.Context, head func(seq int64, hash string, found bool) error,
		entry func(*task.AuditEntry) error, record func(*task.Record) error) error
}

// HeadReader is implemented by stores that keep a head record (both pactum
// drivers): AuditHead returns the sequence number and hash of the last
// sealed entry, 0 and "" before the first.
type HeadReader interface {
	AuditHead(ctx context.Context) (seq int64, hash string, err error)
}

// Kind classifies a break of the chain.
type Kind string

// The kinds of breaks Verify reports.
const (
	// KindEdited: the entry's content, sequence number or links changed
	// since it was sealed (its hash no longer matches, or it was resealed
	// and the entry after it, or the head record, still names the old
	// hash).
	KindEdited Kind = "edited"
	// KindInserted: the entry was not sealed into the chain at that place
	// (an extra row, possibly with a correct hash of its own).
	KindInserted Kind = "inserted"
	// KindRemoved: the entry is missing from the middle of the chain (a gap,
	// or the entries after it were renumbered to close the gap).
	KindRemoved Kind = "removed"
	// KindDuplicate: two or more rows carry the entry's sequence number.
	KindDuplicate Kind = "duplicate"
	// KindOutOfRange: a row's sequence number is below 1 or beyond the
	// head record.
	KindOutOfRange Kind = "out-of-range"
	// KindTruncated: the chain ends before its head record or before the
	// anchor: entries were cut off the end.
	KindTruncated Kind = "truncated"
	// KindHead: the store has lost its head record.
	KindHead Kind = "head"
	// KindAnchor: the chain's entry at the anchored sequence number does
	// not have the anchored hash: the chain was rewritten at or before it.
	KindAnchor Kind = "anchor"
)

// Head names one entry of the chain by sequence number and hash: the
// chain's end, a head record, or an anchor.
type Head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// String formats h as SEQ:HASH, the form ParseHead reads.
func (h Head) String() string { return strconv.FormatInt(h.Seq, 10) + ":" + h.Hash }

// ErrBadHead is wrapped by ParseHead's errors.
var ErrBadHead = errors.New("audit: bad head")

// ParseHead parses SEQ:HASH (as Head.String and the anchor publisher write
// it): a sequence number of at least 1 and a SHA-256 in hex, 64 digits.
// Upper-case digits are accepted and returned in lower case.
func ParseHead(s string) (Head, error) {
	seqText, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Head{}, fmt.Errorf("%w %q: want SEQ:HASH", ErrBadHead, s)
	}
	seq, err := strconv.ParseInt(seqText, 10, 64)
	if err != nil || seq < 1 || seqText[0] == '+' {
		return Head{}, fmt.Errorf("%w %q: the sequence number must be an integer of at least 1", ErrBadHead, s)
	}
	hash = strings.ToLower(hash)
	if b, err := hex.DecodeString(hash); err != nil || len(b) != 32 {
		return Head{}, fmt.Errorf("%w %q: the hash must be 64 hex digits (a SHA-256)", ErrBadHead, s)
	}
	return Head{Seq: seq, Hash: hash}, nil
}

// Options tune VerifyWith.
type Options struct {
	// Anchor, when set, is a head published earlier (Publisher, or the
	// head a previous verify printed): the chain must contain an entry with
	// the anchor's sequence number and hash. A chain that ends before it
	// is truncated; another hash there means a rewrite at or before it.
	Anchor *Head
}

// Report is the outcome of Verify.
type Report struct {
	// OK is true when the chain, the head record, the anchor (if any) and
	// the execution record cross-check all passed.
	OK bool `json:"ok"`
	// Entries counts the rows of the audit table read (all of them).
	Entries int `json:"entries"`
	// Head is the chain's end as read: the sequence number and hash of the
	// row with the highest sequence number (zero for an empty table).
	Head Head `json:"head"`
	// HeadRecord is the head record the store keeps beside the chain; nil
	// when the store keeps none (not a Scanner) or lost it.
	HeadRecord *Head `json:"headRecord,omitempty"`
	// Anchor is Options.Anchor, and AnchorOK whether the chain holds it.
	Anchor   *Head `json:"anchor,omitempty"`
	AnchorOK bool  `json:"anchorOk,omitempty"`
	// Break is the first break of the chain (of the chain, its head
	// record or its anchor, the one with the lowest sequence number); nil
	// when there is none.
	Break *Break `json:"break,omitempty"`
	// Records is the cross-check with the execution record; nil when the
	// store is not a Scanner.
	Records *RecordCheck `json:"records,omitempty"`

	// FirstBad, Kind and Problem repeat Break (0, "", "" when there is
	// none). For a removed entry FirstBad is the sequence number it had.
	FirstBad int64  `json:"-"`
	Kind     Kind   `json:"-"`
	Problem  string `json:"-"`
	// LastSeq and LastHash describe the last entry before FirstBad that
	// checked out, or the chain's end when there is no break.
	LastSeq  int64  `json:"-"`
	LastHash string `json:"-"`
}

// Break is one break of the chain: the entry to blame, its kind and what
// is wrong.
type Break struct {
	Seq     int64  `json:"seq"`
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
}

// RecordCheck is the cross-check of the execution record with the audit
// log: every record (one per transition) has exactly one audit entry of
// kind task.transition carrying the same record, and every such entry
// names a record that exists.
type RecordCheck struct {
	// OK is true when every record and every transition entry matched.
	OK bool `json:"ok"`
	// Records counts the execution records read, Transitions the audit
	// entries of kind task.transition.
	Records     int `json:"records"`
	Transitions int `json:"transitions"`
	// Problems counts the mismatches; First describes the first one.
	Problems int            `json:"problems"`
	First    *RecordProblem `json:"first,omitempty"`
}

// RecordProblem is one mismatch between the execution record and the
// audit log.
type RecordProblem struct {
	// TaskID and RecordSeq name the record.
	TaskID    string `json:"taskId"`
	RecordSeq int    `json:"recordSeq"`
	// AuditSeq is the audit entry involved (0 when there is none).
	AuditSeq int64 `json:"auditSeq,omitempty"`
	// Kind is "unaudited" (a record without its audit entry), "unrecorded"
	// (an entry naming a record that does not exist), "differs" (the
	// record and its entry disagree), "duplicate" (two entries for one
	// record) or "malformed" (a transition entry whose data is no record).
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Verify checks the audit log of s; see VerifyWith.
func Verify(ctx context.Context, s task.Store) (*Report, error) {
	return VerifyWith(ctx, s, Options{})
}

// VerifyWith reads the whole audit table of s and checks that it is one
// unbroken chain starting at sequence 1 and ending at the store's head
// record (and containing opts.Anchor), and cross-checks it with the
// execution record. A broken chain is not an error: it is reported in the
// Report; the error is for failures to read. A read that fails part-way
// (a corrupt page, a lost connection) returns an error saying the chain
// could not be read whole and no Report: a chain that was not fully read
// is never reported OK.
func VerifyWith(ctx context.Context, s task.Store, opts Options) (*Report, error) {
	v := newVerifier(opts)
	if sc, ok := s.(Scanner); ok {
		v.records = newRecordIndex()
		err := sc.ScanAudit(ctx, v.head, func(e *task.AuditEntry) error {
			v.entry(e)
			return nil
		}, func(r *task.Record) error {
			v.records.record(r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("audit: verify: could not read the whole chain: %w", err)
		}
	} else {
		var after int64
		for {
			page, err := s.AuditEntries(ctx, after, pageSize)
			if err != nil {
				return nil, fmt.Errorf("audit: verify: could not read the whole chain (entries after %d): %w", after, err)
			}
			if len(page) == 0 {
				break
			}
			for i := range page {
				v.entry(&page[i])
			}
			after = page[len(page)-1].Seq
		}
	}
	return v.finish(), nil
}

// row is what the chain walk keeps of an entry.
type row struct {
	seq        int64
	hash, prev string
	// self: the entry hashes to its stored hash.
	self bool
}

// verifier walks the rows in order. Until it meets a suspicious row it
// keeps only a window of the last good ones; then it collects a few rows
// of lookahead, which decide whom to blame, and stops judging the chain.
// Rows keep being counted and fed to the records cross-check.
type verifier struct {
	opts       Options
	headRec    *Head
	headKnown  bool // the store reports head records (a Scanner)
	entries    int
	end        Head // the highest-seq row seen
	window     []row
	suspect    *row // the first suspicious row, or nil
	suspectWhy string
	look       []row // rows after suspect
	brk        *Break
	done       bool // the chain walk has its verdict (brk, or ended)
	anchorSeen []string
	records    *recordIndex
}

func newVerifier(opts Options) *verifier { return &verifier{opts: opts} }

func (v *verifier) head(seq int64, hash string, found bool) error {
	v.headKnown = true
	if found {
		v.headRec = &Head{Seq: seq, Hash: hash}
	}
	return nil
}

// last returns the last good row, or nil at the start.
func (v *verifier) last() *row {
	if len(v.window) == 0 {
		return nil
	}
	return &v.window[len(v.window)-1]
}

// find returns the window's row with the given hash, or nil.
func (v *verifier) find(hash string) *row {
	for i := len(v.window) - 1; i >= 0; i-- {
		if v.window[i].hash == hash {
			return &v.window[i]
		}
	}
	return nil
}

// at returns the window's row with sequence number seq, or nil.
func (v *verifier) at(seq int64) *row {
	for i := len(v.window) - 1; i >= 0; i-- {
		if v.window[i].seq == seq {
			return &v.window[i]
		}
	}
	return nil
}

func (v *verifier) entry(e *task.AuditEntry) {
	v.entries++
	if v.entries == 1 || e.Seq >= v.end.Seq {
		v.end = Head{Seq: e.Seq, Hash: e.Hash}
	}
	if a := v.opts.Anchor; a != nil && e.Seq == a.Seq {
		v.anchorSeen = append(v.anchorSeen, e.Hash)
	}
	if v.records != nil {
		v.records.entry(e)
	}
	if v.done {
		return
	}
	r := row{seq: e.Seq, hash: e.Hash, prev: e.PrevHash, self: e.ComputeHash() == e.Hash}
	if v.suspect != nil {
		v.look = append(v.look, r)
		if v.enoughLookahead() {
			v.judge()
		}
		return
	}
	if bad := v.check(e, &r); bad != nil {
		v.brk, v.done = bad, true
		return
	}
	if v.suspect != nil {
		return
	}
	v.window = append(v.window, r)
	if len(v.window) > 2*maxShift+2 {
		v.window = append(v.window[:0], v.window[len(v.window)-maxShift-2:]...)
	}
}

// check judges row r (entry e) against the last good row. It returns a
// break it can name at once, or nil; a row whose blame depends on the rows
// after it becomes the suspect.
func (v *verifier) check(e *task.AuditEntry, r *row) *Break {
	p := v.last()
	var prevSeq int64
	prevHash := ""
	if p != nil {
		prevSeq, prevHash = p.seq, p.hash
	}
	if r.seq < 1 {
		return &Break{Seq: r.seq, Kind: KindOutOfRange, Message: fmt.Sprintf(
			"a row with sequence number %d is out of range (the chain starts at 1): it was inserted", r.seq)}
	}
	if p != nil && r.seq < prevSeq {
		// Scanners return rows in sequence order; this is a store bug.
		return &Break{Seq: r.seq, Kind: KindDuplicate, Message: fmt.Sprintf(
			"entry %d comes after entry %d: the store returned the chain out of order", r.seq, prevSeq)}
	}
	if p != nil && r.seq == prevSeq {
		v.suspect, v.suspectWhy = r, "duplicate"
		return nil
	}
	beyond := v.headRec != nil && r.seq > v.headRec.Seq
	if r.seq > prevSeq+1 {
		if beyond {
			return &Break{Seq: r.seq, Kind: KindOutOfRange, Message: fmt.Sprintf(
				"entry %d is beyond the head record (%d), and the chain before it ends at %d: it was inserted", r.seq, v.headRec.Seq, prevSeq)}
		}
		want := prevSeq + 1
		if r.seq == want+1 {
			return &Break{Seq: want, Kind: KindRemoved, Message: fmt.Sprintf(
				"entry %d is missing (removed): the sequence jumps from %d to %d", want, prevSeq, r.seq)}
		}
		return &Break{Seq: want, Kind: KindRemoved, Message: fmt.Sprintf(
			"entries %d to %d are missing (removed): the sequence jumps from %d to %d", want, r.seq-1, prevSeq, r.seq)}
	}
	if !r.self {
		return v.unsealed(e, r)
	}
	if r.prev != prevHash {
		v.suspect, v.suspectWhy = r, "link"
		return nil
	}
	if beyond {
		return &Break{Seq: r.seq, Kind: KindOutOfRange, Message: fmt.Sprintf(
			"entry %d is beyond the head record (%d): it was appended without moving the head record (inserted)", r.seq, v.headRec.Seq)}
	}
	return nil
}

// unsealed blames an entry whose content does not hash to its stored hash:
// an entry renumbered to make room for an insertion or to close a removal
// hashes correctly under its original sequence number; any other is edited.
func (v *verifier) unsealed(e *task.AuditEntry, r *row) *Break {
	c := *e
	for d := int64(1); d <= maxShift; d++ {
		for _, orig := range []int64{r.seq - d, r.seq + d} {
			if orig < 1 {
				continue
			}
			c.Seq = orig
			if c.ComputeHash() != e.Hash {
				continue
			}
			if orig < r.seq {
				// Moved up: rows were inserted before it. They are the ones
				// after the entry it follows.
				first := orig
				if pred := v.find(e.PrevHash); pred != nil {
					first = pred.seq + 1
				}
				return &Break{Seq: first, Kind: KindInserted, Message: fmt.Sprintf(
					"entry %d was inserted: the entry now at %d was sealed as entry %d, so %d entries were inserted before it and the entries after them renumbered",
					first, r.seq, orig, d)}
			}
			// Moved down: entries were removed and the gap closed.
			if d == 1 {
				return &Break{Seq: r.seq, Kind: KindRemoved, Message: fmt.Sprintf(
					"entry %d was removed: the entry now at %d was sealed as entry %d, the entries after it were renumbered to close the gap",
					r.seq, r.seq, orig)}
			}
			return &Break{Seq: r.seq, Kind: KindRemoved, Message: fmt.Sprintf(
				"entries %d to %d were removed: the entry now at %d was sealed as entry %d, the entries after it were renumbered to close the gap",
				r.seq, orig-1, r.seq, orig)}
		}
	}
	return &Break{Seq: r.seq, Kind: KindEdited, Message: fmt.Sprintf(
		"entry %d was edited (or forged): its content hashes to %s, but its stored hash is %s", r.seq, short(e.ComputeHash()), short(e.Hash))}
}

// enoughLookahead reports whether the rows after the suspect decide its
// case: the suspect's successor (the first row with a higher sequence
// number) has been read, or a few rows have.
func (v *verifier) enoughLookahead() bool {
	if len(v.look) >= 8 {
		return true
	}
	return v.look[len(v.look)-1].seq > v.suspect.seq
}

// continues reports whether the chain after the suspect's position goes on
// from hash: the successor in the lookahead names it as its previous hash,
// or, with no successor, the head record or the anchor names it.
func (v *verifier) continues(seq int64, hash string) bool {
	for _, r := range v.look {
		if r.seq == seq+1 {
			return r.prev == hash
		}
	}
	if v.headRec != nil && v.headRec.Seq == seq {
		return v.headRec.Hash == hash
	}
	if a := v.opts.Anchor; a != nil && a.Seq == seq {
		return a.Hash == hash
	}
	return false
}

// judge names the break at the suspect, using the window before it and the
// lookahead after it.
func (v *verifier) judge() {
	defer func() { v.done = true }()
	r := v.suspect
	p := v.last()
	if v.suspectWhy == "duplicate" {
		// p and r (and any further rows at this seq in the lookahead) share
		// a sequence number; the genuine one is the one the chain goes on
		// from. p passed its checks already; r's are checked here.
		rows := []row{*p, *r}
		for _, l := range v.look {
			if l.seq == r.seq {
				rows = append(rows, l)
			}
		}
		var genuine, intruders []string
		for _, x := range rows {
			if x.self && v.continues(x.seq, x.hash) {
				genuine = append(genuine, x.hash)
			} else {
				intruders = append(intruders, short(x.hash))
			}
		}
		msg := fmt.Sprintf("entry %d appears %d times", r.seq, len(rows))
		if len(genuine) == 1 {
			msg += fmt.Sprintf(": the row with hash %s is genuine (the chain goes on from it); the row(s) with hash %s were inserted",
				short(genuine[0]), strings.Join(intruders, ", "))
		} else {
			msg += ": none of them can be told genuine from the chain after it; all but one were inserted"
		}
		v.brk = &Break{Seq: r.seq, Kind: KindDuplicate, Message: msg}
		return
	}
	// A broken link: r hashes correctly but does not name p's hash. One of
	// the two is not what was sealed there.
	var prevSeq int64
	if p != nil {
		prevSeq = p.seq
	}
	cont := v.continues(r.seq, r.hash)
	if p == nil {
		v.brk = &Break{Seq: r.seq, Kind: KindEdited, Message: fmt.Sprintf(
			"entry %d does not start the chain: its previous hash is %s, want empty (it was rewritten, or inserted)", r.seq, short(r.prev))}
		return
	}
	if pred := v.find(r.prev); pred != nil {
		if cont {
			// r and the chain after it follow an earlier entry: the rows
			// between were put in.
			v.brk = &Break{Seq: pred.seq + 1, Kind: KindInserted, Message: fmt.Sprintf(
				"entry %d was inserted: entry %d, which the chain goes on from, follows entry %d directly, so entries %d to %d are not part of the chain",
				pred.seq+1, r.seq, pred.seq, pred.seq+1, r.seq-1)}
			return
		}
		v.brk = &Break{Seq: r.seq, Kind: KindInserted, Message: fmt.Sprintf(
			"entry %d does not follow entry %d: it links to entry %d instead, and nothing follows it (inserted)", r.seq, prevSeq, pred.seq)}
		return
	}
	if cont {
		v.brk = &Break{Seq: prevSeq, Kind: KindEdited, Message: fmt.Sprintf(
			"entry %d was rewritten and resealed: its hash is %s, but entry %d, which the chain goes on from, names %s as its predecessor",
			prevSeq, short(p.hash), r.seq, short(r.prev))}
		return
	}
	v.brk = &Break{Seq: r.seq, Kind: KindEdited, Message: fmt.Sprintf(
		"entry %d does not follow entry %d: its previous hash is %s, but entry %d's hash is %s (entry %d was edited and resealed, or forged)",
		r.seq, prevSeq, short(r.prev), prevSeq, short(p.hash), r.seq)}
}

// finish completes the walk and the cross-checks and builds the report.
func (v *verifier) finish() *Report {
	if v.suspect != nil && !v.done {
		v.judge()
	}
	rep := &Report{Entries: v.entries, Head: v.end, HeadRecord: v.headRec, Anchor: v.opts.Anchor}
	brk := v.brk
	consider := func(b *Break) {
		if b != nil && (brk == nil || b.Seq < brk.Seq) {
			brk = b
		}
	}
	// The chain's end against the head record, when the walk got there.
	var chainEnd Head
	if p := v.last(); p != nil {
		chainEnd = Head{Seq: p.seq, Hash: p.hash}
	}
	if v.brk == nil && v.headKnown {
		switch h := v.headRec; {
		case h == nil:
			consider(&Break{Seq: chainEnd.Seq + 1, Kind: KindHead, Message: fmt.Sprintf(
				"the head record is missing (the chain ends at %d): it was deleted", chainEnd.Seq)})
		case chainEnd.Seq < h.Seq:
			consider(&Break{Seq: chainEnd.Seq + 1, Kind: KindTruncated, Message: fmt.Sprintf(
				"truncated: the head record says %d/%s, but the chain ends at %d: entries %d to %d were cut off the end",
				h.Seq, short(h.Hash), chainEnd.Seq, chainEnd.Seq+1, h.Seq)})
		case chainEnd.Hash != h.Hash:
			consider(&Break{Seq: chainEnd.Seq, Kind: KindEdited, Message: fmt.Sprintf(
				"entry %d does not match the head record: its hash is %s, the head record says %s (the entry was rewritten and resealed, or the head record was edited)",
				chainEnd.Seq, short(chainEnd.Hash), short(h.Hash))})
		}
	}
	if a := v.opts.Anchor; a != nil {
		switch {
		case len(v.anchorSeen) == 0 && v.end.Seq < a.Seq:
			consider(&Break{Seq: v.end.Seq + 1, Kind: KindTruncated, Message: fmt.Sprintf(
				"truncated: the anchor says %d/%s, but the chain ends at %d: entries %d to %d were cut off the end",
				a.Seq, short(a.Hash), v.end.Seq, v.end.Seq+1, a.Seq)})
		case len(v.anchorSeen) == 0:
			consider(&Break{Seq: a.Seq, Kind: KindAnchor, Message: fmt.Sprintf(
				"the anchored entry %d is missing from the chain", a.Seq)})
		case len(v.anchorSeen) > 1 || v.anchorSeen[0] != a.Hash:
			consider(&Break{Seq: a.Seq, Kind: KindAnchor, Message: fmt.Sprintf(
				"entry %d has hash %s, but the anchor says %s: the chain was rewritten at or before entry %d",
				a.Seq, short(v.anchorSeen[0]), short(a.Hash), a.Seq)})
		default:
			rep.AnchorOK = true
		}
	}
	if v.records != nil {
		rep.Records = v.records.finish()
	}
	rep.Break = brk
	rep.OK = brk == nil && (rep.Records == nil || rep.Records.OK)
	if brk != nil {
		rep.FirstBad, rep.Kind, rep.Problem = brk.Seq, brk.Kind, brk.Message
		if g := v.at(brk.Seq - 1); g != nil {
			rep.LastSeq, rep.LastHash = g.seq, g.hash
		}
	} else {
		rep.LastSeq, rep.LastHash = chainEnd.Seq, chainEnd.Hash
	}
	return rep
}

// recordKey names one execution record.
type recordKey struct {
	task string
	seq  int
}

// sealedRecord is a record as a transition entry carries it.
type sealedRecord struct {
	entry int64
	rec   task.Record
	dups  int
}

// recordIndex cross-checks transition entries with the execution record.
// It holds the records the transition entries carry until the records
// themselves are read.
type recordIndex struct {
	byKey map[recordKey]*sealedRecord
	check RecordCheck
}

func newRecordIndex() *recordIndex {
	return &recordIndex{byKey: map[recordKey]*sealedRecord{}}
}

func (x *recordIndex) problem(p RecordProblem) {
	x.check.Problems++
	if x.check.First == nil {
		x.check.First = &p
	}
}

func (x *recordIndex) entry(e *task.AuditEntry) {
	if e.Kind != task.AuditTransition {
		return
	}
	x.check.Transitions++
	var rec task.Record
	if err := json.Unmarshal(e.Data, &rec); err != nil || rec.TaskID != e.TaskID {
		x.problem(RecordProblem{TaskID: e.TaskID, AuditSeq: e.Seq, Kind: "malformed", Message: fmt.Sprintf(
			"audit entry %d is a transition whose data is not a record of task %q", e.Seq, e.TaskID)})
		return
	}
	k := recordKey{rec.TaskID, rec.Seq}
	if s, ok := x.byKey[k]; ok {
		s.dups++
		x.problem(RecordProblem{TaskID: rec.TaskID, RecordSeq: rec.Seq, AuditSeq: e.Seq, Kind: "duplicate", Message: fmt.Sprintf(
			"audit entries %d and %d both carry record %d of task %q", s.entry, e.Seq, rec.Seq, rec.TaskID)})
		return
	}
	x.byKey[k] = &sealedRecord{entry: e.Seq, rec: rec}
}

func (x *recordIndex) record(r *task.Record) {
	x.check.Records++
	k := recordKey{r.TaskID, r.Seq}
	s, ok := x.byKey[k]
	if !ok {
		x.problem(RecordProblem{TaskID: r.TaskID, RecordSeq: r.Seq, Kind: "unaudited", Message: fmt.Sprintf(
			"record %d of task %q (%s → %s at %s) has no audit entry: its entry was removed",
			r.Seq, r.TaskID, r.From, r.To, r.At.UTC().Format(time.RFC3339Nano))})
		return
	}
	delete(x.byKey, k)
	if !sameRecord(&s.rec, r) {
		x.problem(RecordProblem{TaskID: r.TaskID, RecordSeq: r.Seq, AuditSeq: s.entry, Kind: "differs", Message: fmt.Sprintf(
			"record %d of task %q differs from audit entry %d, which sealed it: the record was edited (stored %s → %s, sealed %s → %s)",
			r.Seq, r.TaskID, s.entry, r.From, r.To, s.rec.From, s.rec.To)})
	}
}

func (x *recordIndex) finish() *RecordCheck {
	// What is left are entries whose record is not there. Report the one
	// sealed first.
	var first *sealedRecord
	for _, s := range x.byKey {
		x.check.Problems++
		if first == nil || s.entry < first.entry {
			first = s
		}
	}
	if first != nil && x.check.First == nil {
		x.check.First = &RecordProblem{TaskID: first.rec.TaskID, RecordSeq: first.rec.Seq, AuditSeq: first.entry, Kind: "unrecorded", Message: fmt.Sprintf(
			"audit entry %d seals record %d of task %q, which is not in the execution record: the record was removed",
			first.entry, first.rec.Seq, first.rec.TaskID)}
	}
	x.check.OK = x.check.Problems == 0
	c := x.check
	return &c
}

func sameRecord(a, b *task.Record) bool {
	return a.TaskID == b.TaskID && a.Seq == b.Seq && a.From == b.From && a.To == b.To && a.At.Equal(b.At) &&
		a.Attempt == b.Attempt && a.Node == b.Node && a.Reason == b.Reason && a.ErrorCode == b.ErrorCode &&
		a.PolicyVersion == b.PolicyVersion && sameEvidence(a.Evidence, b.Evidence)
}

// sameEvidence compares two records' evidence by its JSON, which is what
// the audit entry sealed.
func sameEvidence(a, b []task.Evidence) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
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
