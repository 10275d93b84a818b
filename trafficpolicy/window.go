package trafficpolicy

import (
	"crypto/sha256"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// SlotDuration is the step of the sliding window of rate-limit: time is
// cut into slots of ten seconds aligned on the Unix epoch (12:00:00 to
// 12:00:10, ...), which is why a rate is a multiple of ten seconds.
//
// A request at time t belongs to the slot holding t. The window of a
// request is its slot and the rate/SlotDuration - 1 slots before it, so
// with a rate of 60s a request at 12:00:55 counts the requests admitted
// from 12:00:00 on. The request is admitted when fewer than capacity
// requests of its bucket were admitted in its window. Its retry-after,
// when it is not, is the whole number of seconds, rounded up, until the
// start of the first slot whose window holds fewer than capacity: the
// moment a request of the bucket would be admitted.
//
// So in any rate/SlotDuration consecutive slots at most capacity requests
// of a bucket are admitted, and a bucket flooded without pause admits
// exactly capacity requests per rate. Two bursts of capacity may be less
// than a rate apart, by at most one slot: one at the end of a slot, the
// next at the start of the slot where the first leaves the window.
const SlotDuration = 10 * time.Second

const slotNanos = int64(SlotDuration)

// MaxBuckets is how many buckets one rate-limit action keeps, about 200
// MB of them with one count each, and 8 bytes more for each slot of its
// window in which a bucket admitted a request (docs/operations.md gives
// the measure). A bucket goes when all
// its requests have left the window (its memory is reused by the next new
// bucket), and, past MaxBuckets, the bucket whose last admitted request
// is the oldest of its sixteenth of the buckets is forgotten: its key
// starts afresh. (A sixteenth that has none to forget takes one more, so
// the bound may be passed by at most 15.)
const MaxBuckets = 1_000_000

// windowShards is how many independently locked parts a window's buckets
// are spread over, by a hash of their key, so that requests of different
// buckets seldom wait for each other.
const windowShards = 16

// maxKeyBytes is the longest bucket key a window keeps as it is. A longer
// one, such as a header a client made large (net/http reads up to 1 MiB
// of them), is kept as its SHA-256 digest, so that a bucket's memory does
// not depend on what a request holds and MaxBuckets bounds the window's.
const maxKeyBytes = 128

// longKeyMark starts the digest of a long key. No key of at most
// maxKeyBytes made by keyPart.append starts with it: it would be the
// first byte of a length of 127 or more.
const longKeyMark = 0xff

// noBucket marks the end of a shard's list of buckets.
const noBucket = -1

// window counts the admitted requests of every bucket of one rate-limit
// action. It is safe for concurrent use.
type window struct {
	capacity uint32 // at most capacity admitted per window
	slots    uint32 // the window's length in slots: rate / SlotDuration
	seed     maphash.Seed
	max      int64        // most buckets held
	held     atomic.Int64 // buckets held, in every shard
	shards   [windowShards]windowShard
}

// windowShard holds some of a window's buckets: a map from key to the
// bucket's index in buckets, and a list of the buckets in the order of
// their last admitted request, newest first, through prev and next.
type windowShard struct {
	mu         sync.Mutex
	index      map[string]int32
	buckets    []bucket
	free       []int32 // indexes of buckets removed, to reuse
	head, tail int32   // newest and oldest bucket, noBucket when empty
}

// bucket is one bucket's admitted requests: a count per slot, oldest
// first, of the slots in its window with at least one.
type bucket struct {
	key        string
	prev, next int32
	sum        uint32 // the sum of the counts
	counts     []slotCount
}

// slotCount is the number of requests admitted in one slot.
type slotCount struct {
	slot  uint32 // the Unix time of its start divided by SlotDuration
	count uint32
}

// newWindow returns a window admitting capacity requests per bucket within
// rate, holding at most maxBuckets buckets.
func newWindow(capacity uint32, rate time.Duration, maxBuckets int) *window {
	w := &window{capacity: capacity, slots: uint32(rate / SlotDuration), seed: maphash.MakeSeed(), max: int64(max(1, maxBuckets))}
	for i := range w.shards {
		w.shards[i] = windowShard{index: make(map[string]int32), head: noBucket, tail: noBucket}
	}
	return w
}

// take counts a request of the bucket key at now, in nanoseconds since the
// Unix epoch. It reports whether the request is admitted, and when it is
// not, the whole seconds after which a request of the bucket would be. A
// key longer than maxKeyBytes counts by its digest.
func (w *window) take(key []byte, now int64) (admitted bool, retryAfter int64) {
	var digest [1 + sha256.Size]byte
	if len(key) > maxKeyBytes {
		digest[0] = longKeyMark
		sum := sha256.Sum256(key)
		copy(digest[1:], sum[:])
		key = digest[:]
	}
	slot := uint32(now / slotNanos)
	sh := &w.shards[maphash.Bytes(w.seed, key)%windowShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i, ok := sh.index[string(key)]
	if !ok {
		// A new bucket, empty: capacity is at least 1, so the request is
		// admitted.
		i = w.add(sh, string(key), slot)
	}
	b := &sh.buckets[i]
	if newest := b.newest(); slot < newest {
		// The wall clock went back: count in the bucket's newest slot,
		// so that its counts stay in order.
		slot = newest
	}
	b.expire(slot, w.slots)
	if b.sum < w.capacity {
		b.admit(slot)
		sh.toFront(i)
		return true, 0
	}
	return false, b.retryAfter(now, w.capacity, w.slots)
}

// expire drops the counts of the slots out of the window of a request in
// slot: those at or before slot - slots.
func (b *bucket) expire(slot, slots uint32) {
	n := 0
	for n < len(b.counts) && b.counts[n].slot+slots <= slot {
		b.sum -= b.counts[n].count
		n++
	}
	if n > 0 {
		b.counts = append(b.counts[:0], b.counts[n:]...)
	}
}

// admit counts one request in slot.
func (b *bucket) admit(slot uint32) {
	b.sum++
	if last := len(b.counts) - 1; last >= 0 && b.counts[last].slot == slot {
		b.counts[last].count++
		return
	}
	b.counts = append(b.counts, slotCount{slot: slot, count: 1})
}

// retryAfter returns the whole seconds from now until the start of the
// first slot whose window holds fewer than capacity of the bucket's
// requests: the slot after the one where the oldest requests that must
// leave the window were admitted, plus the window's length.
func (b *bucket) retryAfter(now int64, capacity, slots uint32) int64 {
	leave := b.sum - capacity + 1 // how many must leave the window
	var left uint32
	for _, c := range b.counts {
		left += c.count
		if left >= leave {
			wait := int64(c.slot+slots)*slotNanos - now
			return (wait + int64(time.Second) - 1) / int64(time.Second)
		}
	}
	// Unreachable: the counts sum to sum, at least capacity.
	return int64(slots) * int64(SlotDuration/time.Second)
}

// newest returns the slot of the bucket's last admitted request.
func (b *bucket) newest() uint32 {
	if len(b.counts) == 0 {
		return 0
	}
	return b.counts[len(b.counts)-1].slot
}

// add makes an empty bucket for key in the shard sh, locked. It first
// forgets a few of the shard's buckets whose requests have all left the
// window, and, when the window holds its most buckets, the shard's bucket
// whose last admitted request is the oldest: with keys spread evenly over
// the shards, about the oldest of all.
func (w *window) add(sh *windowShard, key string, slot uint32) int32 {
	for range 4 {
		if sh.tail == noBucket || sh.buckets[sh.tail].newest()+w.slots > slot {
			break
		}
		sh.remove(sh.tail)
		w.held.Add(-1)
	}
	if w.held.Load() >= w.max && sh.tail != noBucket {
		sh.remove(sh.tail)
		w.held.Add(-1)
	}
	w.held.Add(1)
	var i int32
	if n := len(sh.free); n > 0 {
		i = sh.free[n-1]
		sh.free = sh.free[:n-1]
	} else {
		sh.buckets = append(sh.buckets, bucket{})
		i = int32(len(sh.buckets) - 1)
	}
	sh.buckets[i] = bucket{key: key, prev: noBucket, next: noBucket, counts: sh.buckets[i].counts[:0]}
	sh.index[key] = i
	sh.pushFront(i)
	return i
}

// remove forgets bucket i.
func (sh *windowShard) remove(i int32) {
	sh.unlink(i)
	delete(sh.index, sh.buckets[i].key)
	sh.buckets[i].key = ""
	sh.buckets[i].sum = 0
	sh.buckets[i].counts = sh.buckets[i].counts[:0]
	sh.free = append(sh.free, i)
}

// toFront makes bucket i the newest.
func (sh *windowShard) toFront(i int32) {
	if sh.head == i {
		return
	}
	sh.unlink(i)
	sh.pushFront(i)
}

func (sh *windowShard) pushFront(i int32) {
	b := &sh.buckets[i]
	b.prev, b.next = noBucket, sh.head
	if sh.head != noBucket {
		sh.buckets[sh.head].prev = i
	}
	sh.head = i
	if sh.tail == noBucket {
		sh.tail = i
	}
}

func (sh *windowShard) unlink(i int32) {
	b := &sh.buckets[i]
	if b.prev != noBucket {
		sh.buckets[b.prev].next = b.next
	} else {
		sh.head = b.next
	}
	if b.next != noBucket {
		sh.buckets[b.next].prev = b.prev
	} else {
		sh.tail = b.prev
	}
	b.prev, b.next = noBucket, noBucket
}
