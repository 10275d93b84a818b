package schemas

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"github.com/segmentio/ksuid"
)

// IDs makes the ids of resources that lists order by creation: a prefix and
// a KSUID whose string order is the order the ids were made in, exactly,
// not only to the second.
//
// A KSUID is 4 bytes of seconds and 16 of payload, which ksuid.New fills
// at random, so ids of one second sort at random. The payload of an id of
// IDs starts with the nanoseconds within its second, big-endian, followed
// by 12 random bytes: ids sort by the time they were made to the
// nanosecond, across processes as far as their clocks agree. Within one IDs
// each id is at least a nanosecond after the last, even when the clock
// stands still or steps back, so the ids one process makes strictly
// ascend. An id is still a valid KSUID, and its 96 random bits keep ids
// that share a nanosecond distinct.
//
// The zero IDs is ready to use and reads time.Now. Its methods are safe for
// concurrent use.
type IDs struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu   sync.Mutex
	last int64 // Unix nanoseconds of the last id made
}

// New returns a new id, prefix followed by a KSUID, and the time it stands
// for, in UTC: the ids New returns strictly ascend, and their times are
// non-decreasing in the same order.
func (g *IDs) New(prefix string) (string, time.Time) {
	clock := g.Now
	if clock == nil {
		clock = time.Now
	}
	g.mu.Lock()
	at := max(clock().UnixNano(), g.last+1)
	g.last = at
	g.mu.Unlock()

	t := time.Unix(0, at).UTC()
	var payload [16]byte
	binary.BigEndian.PutUint32(payload[:4], uint32(t.Nanosecond()))
	_, _ = rand.Read(payload[4:])          // crypto/rand.Read never fails
	k, _ := ksuid.FromParts(t, payload[:]) // cannot fail: the payload has 16 bytes
	return prefix + k.String(), t
}
