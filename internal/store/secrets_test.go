package store_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
)

// streamHolding returns the sequences of the messages of the bucket's
// stream, every revision of every key, whose bytes hold secret.
func streamHolding(ctx context.Context, t *testing.T, js jetstream.JetStream, secret string) []uint64 {
	t.Helper()
	stream, err := js.Stream(ctx, "KV_"+store.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found []uint64
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		msg, err := stream.GetMsg(ctx, seq)
		if err != nil {
			continue // removed
		}
		if bytes.Contains(msg.Data, []byte(secret)) {
			found = append(found, seq)
		}
	}
	return found
}

// TestReplacedSecretsAreDropped replaces a destination's secret access
// key and then deletes the destination: after each, the secret it no longer
// holds is in no message of the bucket's stream (History 1), so no reader
// of the bucket gets it back. The bytes of a dropped revision stay in the
// stream's block file until JetStream compacts it, and a key-value stream
// denies the deletes that would overwrite them (DenyDelete): encryption at
// rest (sluice serve --data-key-file, or the external server's own) is
// what keeps them from being read on disk.
func TestReplacedSecretsAreDropped(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, js := natstest.Connect(t, natstest.Start(t))
	s, err := store.Open(ctx, js, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	account, err := s.CreateAccount(ctx, "secrets")
	if err != nil {
		t.Fatal(err)
	}
	const first, second = "firstSecretKey/0123456789abcdefghijklmnopq", "secondSecretKey/0123456789abcdefghijklmnop"
	in := credsDestination()
	in.Target.Firehose.Auth.Creds.SecretAccessKey = first
	d, err := s.CreateDestination(ctx, account.ID, in)
	if err != nil {
		t.Fatal(err)
	}

	// A subscription claims the destination: a revision that holds the
	// same secret, which must go too once the secret is replaced.
	// (Deleted again below, so that the destination can be.)
	sub, err := s.CreateSubscription(ctx, account.ID, store.Subscription{
		Sources: []store.Source{{Type: "http_request_complete.v0"}}, DestinationIDs: []string{d.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateDestination(ctx, account.ID, d.ID, func(d *store.Destination) error {
		d.Target.Firehose.Auth.Creds.SecretAccessKey = second
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if seqs := streamHolding(ctx, t, js, first); len(seqs) > 0 {
		t.Errorf("after the update, messages %v of the bucket's stream hold the replaced secret", seqs)
	}

	if _, err := s.DeleteSubscription(ctx, account.ID, sub.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteDestination(ctx, account.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if seqs := streamHolding(ctx, t, js, second); len(seqs) > 0 {
		t.Errorf("after the delete, messages %v of the bucket's stream hold the deleted destination's secret", seqs)
	}
}
