package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/pipeline"
)

// TestStatusReadsMakeNoConsumer reads a destination's status 48 times at
// once, for a second, many with deadlines too short to finish: the status
// bucket's stream never gets a consumer (issue 23: a watch per read let
// one account's reads fill the server's consumers and crash nats.go).
func TestStatusReadsMakeNoConsumer(t *testing.T) {
	e := startDelivery(t, pipeline.DeliveryConfig{})
	kv, err := pipeline.EnsureStatusBucket(e.ctx, e.js, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(e.ctx, e.account+".ed_x.a", []byte(`{"last_outcome":"ok"}`)); err != nil {
		t.Fatal(err)
	}
	reader := pipeline.NewStatusReader(e.js, kv, 5*time.Minute)
	stream, err := e.js.Stream(e.ctx, "KV_"+pipeline.StatusBucket)
	if err != nil {
		t.Fatal(err)
	}
	floodCtx, stop := context.WithTimeout(e.ctx, time.Second)
	defer stop()
	var wg sync.WaitGroup
	for i := range 48 {
		wg.Go(func() {
			for n := 0; floodCtx.Err() == nil; n++ {
				ctx, cancel := context.WithTimeout(floodCtx, time.Duration(1+(i*7+n)%30)*time.Millisecond)
				_, _ = reader.DestinationStatus(ctx, e.account, "ed_x")
				cancel()
			}
		})
	}
	most := 0
	for floodCtx.Err() == nil {
		info, err := stream.Info(e.ctx)
		if err != nil {
			t.Fatalf("stream info during the reads: %v", err)
		}
		most = max(most, info.State.Consumers)
	}
	wg.Wait()
	if most != 0 {
		t.Errorf("the status bucket's stream had up to %d consumers during the reads, want none", most)
	}
	if _, err := reader.DestinationStatus(e.ctx, e.account, "ed_x"); err != nil {
		t.Errorf("DestinationStatus after the reads: %v", err)
	}
}
