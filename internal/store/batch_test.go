package store

import (
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/internal/natstest"
)

// BenchmarkCommitBatch writes batches of 902 new keys, the most an edge
// delete writes (450 routes, their 450 index keys, the edge and its
// audit event), on an embedded server.
func BenchmarkCommitBatch(b *testing.B) {
	_, js := natstest.Connect(b, natstest.Start(b))
	s, err := Open(b.Context(), js, Config{})
	if err != nil {
		b.Fatal(err)
	}
	const size = 902
	value := make([]byte, 300)
	for i := 0; b.Loop(); i++ {
		writes := make([]write, size)
		for j := range writes {
			writes[j] = write{key: fmt.Sprintf("bench.%d.%d", i, j), value: value}
		}
		if _, err := s.commitBatch(b.Context(), writes); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCommitBatchAcrossAcks writes a batch longer than batchAckEvery,
// whose messages between the answered ones are published without waiting,
// and finds every key at its revision; and a batch the server refuses
// past its first messages (over its 1000) stores none of them.
func TestCommitBatchAcrossAcks(t *testing.T) {
	_, js := natstest.Connect(t, natstest.Start(t))
	s, err := Open(t.Context(), js, Config{})
	if err != nil {
		t.Fatal(err)
	}
	batch := func(name string, n int) []write {
		writes := make([]write, n)
		for i := range writes {
			writes[i] = write{key: fmt.Sprintf("%s.%d", name, i), value: fmt.Appendf(nil, "%d", i)}
		}
		return writes
	}
	writes := batch("long", 3*batchAckEvery+5)
	revisions, err := s.commitBatch(t.Context(), writes)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range writes {
		entry, err := s.kv.Get(t.Context(), w.key)
		if err != nil || string(entry.Value()) != fmt.Sprint(i) || entry.Revision() != revisions[i] {
			t.Fatalf("%s: %v, %v; want %d at revision %d", w.key, entry, err, i, revisions[i])
		}
	}
	if _, err := s.commitBatch(t.Context(), batch("over", 1001)); err == nil {
		t.Fatal("a batch of 1001 messages was taken; JetStream takes at most 1000")
	}
	if entries, err := s.entries(t.Context(), "over.*"); err != nil || len(entries) != 0 {
		t.Fatalf("after the refused batch: %d keys stored, %v; want none", len(entries), err)
	}
}
