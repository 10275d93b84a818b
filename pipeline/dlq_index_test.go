package pipeline

import (
	"errors"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/internal/natstest"
)

// TestLetterIndexClaimsOnce has eight workers claim the letter of one
// event at once: one wins, the others are told another worker is writing
// it; once the letter is written and indexed, a claim finds it held; once
// it is deleted and forgotten, the event can be claimed again.
func TestLetterIndexClaimsOnce(t *testing.T) {
	ctx := t.Context()
	_, js := natstest.Connect(t, natstest.Start(t))
	if _, err := EnsureDLQStream(ctx, js, 0, 0); err != nil {
		t.Fatal(err)
	}
	subject := DLQSubject("ac_1", "ed_1")
	key := letterKey("ac_1", "ed_1", "esb_1", 42)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		won   []uint64
		busy  int
		other []error
	)
	for range 8 {
		wg.Go(func() {
			index := newLetterIndex(js)
			rev, held, err := index.claim(ctx, key, subject)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, errLetterBusy):
				busy++
			case err != nil || held:
				other = append(other, err)
			default:
				won = append(won, rev)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 || busy != 7 || len(other) != 0 {
		t.Fatalf("8 claims at once: %d won, %d busy, others %v; want 1 won and 7 busy", len(won), busy, other)
	}

	index := newLetterIndex(js)
	msg := nats.NewMsg(subject)
	msg.Data = []byte("{}")
	ack, err := js.PublishMsg(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := index.written(ctx, key, won[0], ack.Sequence); err != nil {
		t.Fatal(err)
	}
	if _, held, err := index.claim(ctx, key, subject); err != nil || !held {
		t.Fatalf("claiming a letter written: held %v, error %v; want held", held, err)
	}
	stream, err := js.Stream(ctx, DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.DeleteMsg(ctx, ack.Sequence); err != nil {
		t.Fatal(err)
	}
	// The key left behind names a letter that is gone: it is taken over.
	if _, held, err := index.claim(ctx, key, subject); err != nil || held {
		t.Fatalf("claiming a letter deleted, its key left: held %v, error %v; want claimed", held, err)
	}
	if err := index.release(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, held, err := index.claim(ctx, key, subject); err != nil || held {
		t.Fatalf("claiming a letter released: held %v, error %v; want claimed", held, err)
	}
}
