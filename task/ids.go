package task

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// NewID returns a new UUIDv7 string (RFC 9562): 48 bits of Unix
// milliseconds, then 74 random bits. Time-ordered ids keep the stores'
// B-tree inserts (task ids, their records, messages and artifacts) on the
// newest pages instead of a random page per task, which is most of what a
// group commit writes; they also sort by creation time. The time is the
// real clock's, not a Coordinator's Clock: ids must stay unique and
// ordered across processes, whatever clock a test runs on.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = (b[6] & 0x0f) | 0x70
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (c *Coordinator) nextOwner() string {
	return fmt.Sprintf("%s/%d", c.node, c.claimN.Add(1))
}
