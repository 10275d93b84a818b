package natsserver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/disktest"
	"github.com/sluicehq/sluice/internal/natsserver"
)

// TestStorageWatchRecoversFromAFullDisk fills the disk under the embedded
// server, plain and encrypted: the watch reports the storage full once a
// write has failed, and once space returns it restarts JetStream, so that
// the stream takes messages again with every acknowledged one still there.
func TestStorageWatchRecoversFromAFullDisk(t *testing.T) {
	for _, key := range []string{"", "a-key-of-at-least-thirty-two-characters-0123456789"} {
		t.Run(fmt.Sprintf("encrypted=%v", key != ""), func(t *testing.T) { testStorageWatch(t, key) })
	}
}

func testStorageWatch(t *testing.T, key string) {
	disk := disktest.Mount(t, 32<<20)
	srv := startServer(t, natsserver.Config{DataDir: disk, Key: key})
	ctx := testContext(t)
	watch := srv.NewStorageWatch(natsserver.StorageWatchConfig{CheckInterval: 20 * time.Millisecond, ProbeInterval: 50 * time.Millisecond})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- watch.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		<-done
	})

	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "TEST", Subjects: []string{"test.>"}, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	acked := 0
	publish := func() error {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		_, err := js.Publish(pctx, "test.x", make([]byte, 1024), jetstream.WithMsgID(fmt.Sprint(acked)))
		if err == nil {
			acked++
		}
		return err
	}
	for range 10 {
		if err := publish(); err != nil {
			t.Fatal(err)
		}
	}
	if err := watch.Err(); err != nil {
		t.Fatalf("Err before the disk is full: %v", err)
	}

	filler := disktest.Fill(t, disk)
	for i := 0; publish() == nil; i++ {
		if i == 1000 {
			t.Fatal("1000 messages stored on a full disk")
		}
	}
	select {
	case <-watch.Failed():
	case <-time.After(5 * time.Second):
		t.Fatal("the watch did not see the failed write within 5s")
	}
	if err := watch.Err(); !errors.Is(err, natsserver.ErrStorageFull) {
		t.Fatalf("Err on a full disk = %v, want ErrStorageFull", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	for publish() != nil {
		if time.Since(freed) > 10*time.Second {
			t.Fatalf("the stream takes no message 10s after space returned; watch: %v", watch.Err())
		}
	}
	t.Logf("the stream took messages again %s after space returned", time.Since(freed))
	// The watch clears its error once its own check after the restart
	// has run, which a publish can beat.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for err := watch.Err(); err != nil; err = watch.Err() {
		if time.Since(freed) > 10*time.Second {
			t.Fatalf("Err 10s after space returned: %v", err)
		}
		<-tick.C
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(acked) {
		t.Errorf("the stream holds %d messages; %d were acknowledged", info.State.Msgs, acked)
	}
}
