package pipeline

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// Bounds of a filterMemo.
const (
	// filterMemoSlots is how many events' selections a filterMemo keeps.
	// The routes of one subscription pull the same events at about the
	// same time; one that falls further behind than this filters again.
	filterMemoSlots = 4096
	// filterMemoMaxEvent is the largest event a filterMemo keeps the
	// selection of: a slot may hold the event's bytes (a selection of the
	// whole event is the event), so the memo holds at most
	// filterMemoSlots × filterMemoMaxEvent bytes (64 MiB), about 4 MiB
	// for events of 1 KB.
	filterMemoMaxEvent = 16 << 10
)

// filterMemo remembers what the selector of a subscription's source made
// of recent events, so that the routes of one subscription, one per
// destination it names, run its filter and select its fields once per
// event, not once per route. It is shared by every worker of the process;
// a slot is locked while its event is selected, so that routes asking for
// the same event at once wait for one selection instead of each making
// its own.
type filterMemo struct {
	seed  maphash.Seed
	slots []memoSlot
	// selections counts the events selected, memoized or not, for tests.
	selections atomic.Int64
}

// memoSlot is the selection of one event by one selector.
type memoSlot struct {
	mu     sync.Mutex
	source uint64 // the selector's memoKey; 0 for an empty slot
	sum    uint64 // maphash of the event's bytes
	id     string // the event's id
	out    []byte // read only: every route of the subscription shares it
	keep   bool
	err    error
}

func newFilterMemo(slots int) *filterMemo {
	return &filterMemo{seed: maphash.MakeSeed(), slots: make([]memoSlot, slots)}
}

// sourceKey identifies a subscription's source as it is now: routes of
// one subscription get the same key for a source, and a change of the
// source's filter or fields gives it a new one. It is never 0.
func (m *filterMemo) sourceKey(subscriptionID string, src store.Source) uint64 {
	if m == nil {
		return 0
	}
	b, _ := json.Marshal(src) // a Source always encodes
	var h maphash.Hash
	h.SetSeed(m.seed)
	h.WriteString(subscriptionID)
	h.WriteByte(0)
	h.Write(b)
	return h.Sum64() | 1
}

// selectEvent returns sel's selection of the event data of id, from the
// memo if a route of the same subscription made it already. key is the
// source's sourceKey; a nil memo, or a key of 0, selects every time. A
// selection interrupted by ctx is not kept.
func (m *filterMemo) selectEvent(ctx context.Context, key uint64, sel *filters.Selector, data []byte, h schemas.HeaderSpans, id string) (out []byte, keep bool, err error) {
	if m == nil || key == 0 || len(data) > filterMemoMaxEvent || sel.PassThrough() {
		if m != nil {
			m.selections.Add(1)
		}
		return selectEvent(ctx, sel, data, h)
	}
	sum := maphash.Bytes(m.seed, data)
	slot := &m.slots[(sum^key)%uint64(len(m.slots))]
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.source == key && slot.sum == sum && slot.id == id {
		return slot.out, slot.keep, slot.err
	}
	m.selections.Add(1)
	out, keep, err = selectEvent(ctx, sel, data, h)
	if err != nil && ctx.Err() != nil {
		return out, keep, err
	}
	slot.source, slot.sum, slot.id, slot.out, slot.keep, slot.err = key, sum, id, out, keep, err
	return out, keep, err
}
