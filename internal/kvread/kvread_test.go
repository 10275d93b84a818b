package kvread_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/kvread"
	"github.com/sluicehq/sluice/internal/natstest"
)

const bucket = "READ_TEST"

// newBucket returns a connection and a bucket kept as sluice keeps its
// own: History 1.
func newBucket(t *testing.T) (*nats.Conn, jetstream.KeyValue) {
	t.Helper()
	nc, js := natstest.Connect(t, natstest.Start(t))
	kv, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: bucket, History: 1, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatalf("CreateKeyValue: %v", err)
	}
	return nc, kv
}

func put(t *testing.T, kv jetstream.KeyValue, key, value string) {
	t.Helper()
	if _, err := kv.PutString(t.Context(), key, value); err != nil {
		t.Fatalf("Put(%s): %v", key, err)
	}
}

// TestCurrent reads more keys than a page holds, some deleted, some
// purged, some rewritten, some of keys the filter does not match.
func TestCurrent(t *testing.T) {
	nc, kv := newBucket(t)
	ctx := t.Context()
	want := map[string]string{}
	for i := range 700 {
		key := fmt.Sprintf("things.ac_1.%04d", i)
		put(t, kv, key, "v1")
		want[key] = "v1"
	}
	for i := range 700 {
		key := fmt.Sprintf("things.ac_1.%04d", i)
		switch i % 7 {
		case 0:
			if err := kv.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
			delete(want, key)
		case 1:
			if err := kv.Purge(ctx, key); err != nil {
				t.Fatal(err)
			}
			delete(want, key)
		case 2:
			put(t, kv, key, "v2")
			want[key] = "v2"
		}
	}
	put(t, kv, "things.ac_2.0001", "other account")
	put(t, kv, "others.ac_1.0001", "other kind")

	got, err := kvread.Current(ctx, nc, bucket, "things.ac_1.*")
	if err != nil {
		t.Fatalf("Current: %v", err)
	}
	seen := map[string]bool{}
	var last uint64
	for _, e := range got {
		if seen[e.Key()] {
			t.Errorf("key %s came twice", e.Key())
		}
		seen[e.Key()] = true
		if string(e.Value()) != want[e.Key()] {
			t.Errorf("%s = %q, want %q", e.Key(), e.Value(), want[e.Key()])
		}
		if e.Revision() <= last {
			t.Errorf("%s: revision %d after %d", e.Key(), e.Revision(), last)
		}
		last = e.Revision()
		if e.Operation() != jetstream.KeyValuePut || e.Bucket() != bucket || e.Created().IsZero() {
			t.Errorf("%s: operation %v, bucket %q, created %v", e.Key(), e.Operation(), e.Bucket(), e.Created())
		}
	}
	if len(got) != len(want) {
		t.Errorf("Current returned %d keys, want %d", len(got), len(want))
	}
}

// TestCurrentLargeValues reads values whose page is cut by its bytes
// rather than by its count.
func TestCurrentLargeValues(t *testing.T) {
	nc, kv := newBucket(t)
	big := strings.Repeat("x", 100<<10)
	for i := range 30 {
		put(t, kv, fmt.Sprintf("big.%02d", i), big)
	}
	got, err := kvread.Current(t.Context(), nc, bucket, "big.>")
	if err != nil {
		t.Fatalf("Current: %v", err)
	}
	if len(got) != 30 {
		t.Fatalf("Current returned %d keys, want 30", len(got))
	}
}

// TestCurrentNone reads a filter that matches nothing, in an empty
// bucket and in one with other keys.
func TestCurrentNone(t *testing.T) {
	nc, kv := newBucket(t)
	for _, step := range []string{"empty", "other keys"} {
		got, err := kvread.Current(t.Context(), nc, bucket, "none.*")
		if err != nil || len(got) != 0 {
			t.Errorf("%s: Current = %v, %v; want nothing", step, got, err)
		}
		put(t, kv, "some.key", "v")
	}
}

// TestEachMakesNoConsumer reads and finds the bucket's stream with no
// consumer: a read is requests and replies.
func TestEachMakesNoConsumer(t *testing.T) {
	nc, kv := newBucket(t)
	put(t, kv, "a.b", "v")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := kvread.Current(t.Context(), nc, bucket, "a.*"); err != nil {
			t.Fatalf("Current: %v", err)
		}
	}
	stream, err := js.Stream(t.Context(), "KV_"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Consumers != 0 {
		t.Errorf("the stream has %d consumers after reads, want 0", info.State.Consumers)
	}
}

// TestEachErrors returns fn's error as it is, and the context's.
func TestEachErrors(t *testing.T) {
	nc, kv := newBucket(t)
	put(t, kv, "a.b", "v")
	stop := errors.New("stop")
	if err := kvread.Each(t.Context(), nc, bucket, "a.*", func(kvread.Entry) error { return stop }); err != stop {
		t.Errorf("Each with fn failing = %v, want %v", err, stop)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := kvread.Current(ctx, nc, bucket, "a.*"); !errors.Is(err, context.Canceled) || !errors.Is(err, kvread.ErrRead) {
		t.Errorf("Current with ctx canceled = %v, want ErrRead and context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	if _, err := kvread.Current(ctx, nc, bucket, "a.*"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Current past its deadline = %v, want context.DeadlineExceeded", err)
	}
}

// TestCurrentWrittenDuringRead rewrites a key already read and deletes
// another while the first page is being read: the one comes once with
// its new value, the other not at all.
func TestCurrentWrittenDuringRead(t *testing.T) {
	nc, kv := newBucket(t)
	for i := range 300 { // more than a page
		put(t, kv, fmt.Sprintf("k.%03d", i), "v1")
	}
	var got []kvread.Entry
	index := map[string]int{}
	written := false
	err := kvread.Each(t.Context(), nc, bucket, "k.*", func(e kvread.Entry) error {
		if i, seen := index[e.Key()]; seen {
			got[i] = e
		} else {
			index[e.Key()] = len(got)
			got = append(got, e)
		}
		if !written && e.Key() == "k.001" {
			written = true
			put(t, kv, "k.000", "v2")
			if err := kv.Delete(t.Context(), "k.001"); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Each: %v", err)
	}
	if e := got[index["k.000"]]; string(e.Value()) != "v2" {
		t.Errorf("k.000 = %q, want its new value v2", e.Value())
	}
	if e := got[index["k.001"]]; e.Operation() != jetstream.KeyValueDelete {
		t.Errorf("k.001 last came as %v, want its deletion", e.Operation())
	}
}

// TestEachRefusesAnEndWithoutCount answers a page as a server would but
// for the end of the batch, which has no count of the messages left: the
// read fails rather than ending as if nothing were left.
func TestEachRefusesAnEndWithoutCount(t *testing.T) {
	nc, _ := natstest.Connect(t, natstest.Start(t))
	const fake = "FAKE"
	sub, err := nc.Subscribe("$JS.API.DIRECT.GET.KV_"+fake, func(req *nats.Msg) {
		entry := nats.NewMsg(req.Reply)
		entry.Header.Set(jetstream.SubjectHeader, "$KV."+fake+".a.b")
		entry.Header.Set(jetstream.SequenceHeader, "1")
		entry.Data = []byte("v")
		end := nats.NewMsg(req.Reply)
		end.Header.Set("Status", "204")
		for _, m := range []*nats.Msg{entry, end} {
			if err := nc.PublishMsg(m); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if _, err := kvread.Current(t.Context(), nc, fake, "a.*"); !errors.Is(err, kvread.ErrRead) || !strings.Contains(err.Error(), "Nats-Num-Pending") {
		t.Fatalf("Current with an end of batch without Nats-Num-Pending = %v, want an ErrRead naming the header", err)
	}
}
