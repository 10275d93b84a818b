package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
)

// readFlood is how many lists run at once in TestReadFlood: as many as
// the read flood of issue 23 sent.
const readFlood = 48

// TestReadFlood lists one account's API keys and destinations 48 at a
// time, for two seconds, many with deadlines too short to finish (as
// timed-out requests end theirs): the bucket's stream never gets a
// consumer (a list is requests and replies, nothing the client must keep
// alive or reset), and afterwards the store still answers, another
// account's key among the first.
func TestReadFlood(t *testing.T) {
	e := newEnv(t)
	attacker := e.createAccount(t, "attacker")
	victim := e.createAccount(t, "victim")
	victimKey, err := e.store.CreateAPIKey(e.ctx, victim.ID, store.APIKeyInput{}, "")
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	for range 50 {
		if _, err := e.store.CreateAPIKey(e.ctx, attacker.ID, store.APIKeyInput{Description: "flood"}, ""); err != nil {
			t.Fatalf("CreateAPIKey: %v", err)
		}
	}
	for range 10 {
		e.createDestination(t, attacker.ID, store.Destination{Target: kinesisDestination().Target})
	}
	_, js := natstest.Connect(t, e.srv)
	stream, err := js.Stream(e.ctx, "KV_"+store.Bucket)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}

	floodCtx, stop := context.WithTimeout(e.ctx, 2*time.Second)
	defer stop()
	var wg sync.WaitGroup
	for i := range readFlood {
		wg.Go(func() {
			for n := 0; floodCtx.Err() == nil; n++ {
				// Deadlines from 1 ms to 50 ms: some lists finish, some
				// are cut at every step.
				ctx, cancel := context.WithTimeout(floodCtx, time.Duration(1+(i*7+n)%50)*time.Millisecond)
				if i%2 == 0 {
					_, _, _ = e.store.ListAPIKeys(ctx, attacker.ID, store.Page{})
				} else {
					_, _, _ = e.store.ListDestinations(ctx, attacker.ID, store.Page{})
				}
				cancel()
			}
		})
	}
	most := 0
	for floodCtx.Err() == nil {
		info, err := stream.Info(e.ctx)
		if err != nil {
			t.Fatalf("stream info during the flood: %v", err)
		}
		most = max(most, info.State.Consumers)
	}
	wg.Wait()
	if most != 0 {
		t.Errorf("the bucket's stream had up to %d consumers during the flood, want none: lists must not make consumers", most)
	}

	// The store answers, at once, after the flood.
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	if _, err := e.store.Authenticate(ctx, victimKey.Token); err != nil {
		t.Errorf("Authenticate after the flood: %v", err)
	}
	keys, _, err := e.store.ListAPIKeys(ctx, attacker.ID, store.Page{})
	if err != nil || len(keys) != 50 {
		t.Errorf("ListAPIKeys after the flood = %d keys, %v; want 50", len(keys), err)
	}
}
