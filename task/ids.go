package task

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// NewID returns a new UUIDv7 string (RFC 9562): 48 bits of Unix
// milliseconds, a 12-bit counter within the millisecond (RFC 9562's
// "fixed bit-length dedicated counter", method 1), then 62 random bits.
// Time-ordered ids keep the stores' B-tree inserts (task ids, their
// records, messages and artifacts) on the newest pages instead of a random
// page per task, which is most of what a group commit writes; they also
// sort by creation time, and the ids one process makes sort in the order
// it made them (children spawned together list in spawn order). The time
// is the real clock's, not a Coordinator's Clock: ids must stay unique and
// ordered across processes, whatever clock a test runs on.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[8:])
	ms, seq := idClock.next(uint64(time.Now().UnixMilli()))
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = 0x70 | byte(seq>>8)
	b[7] = byte(seq)
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// idClock hands out (millisecond, counter) pairs that only grow: the
// counter restarts each new millisecond and, when 4,096 ids were made in
// one, the next ids borrow the following millisecond.
var idClock monotonic

type monotonic struct {
	mu  sync.Mutex
	ms  uint64
	seq uint16
}

func (m *monotonic) next(now uint64) (uint64, uint16) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case now > m.ms:
		m.ms, m.seq = now, 0
	case m.seq == 0xfff:
		m.ms, m.seq = m.ms+1, 0
	default:
		m.seq++
	}
	return m.ms, m.seq
}

func (c *Coordinator) nextOwner() string {
	return fmt.Sprintf("%s/%d", c.node, c.claimN.Add(1))
}
