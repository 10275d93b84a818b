package store_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// hangUpCtx is the context of a client that hangs up once its change has
// begun: armed, its Err is nil once (the batch's first message goes out)
// and context.Canceled from then on.
type hangUpCtx struct {
	context.Context
	armed  atomic.Bool
	checks atomic.Int32
}

func (c *hangUpCtx) Err() error {
	if c.armed.Load() && c.checks.Add(1) > 1 {
		return context.Canceled
	}
	return c.Context.Err()
}

// TestHungUpChangesDoNotBlockOtherAccounts: JetStream keeps at most 50
// batches without their commit per stream, each for 10 s, and every
// account's changes share the bucket's stream. A change whose client hangs
// up after its batch began is still committed, so 60 of them from one
// account leave another account's change going through.
func TestHungUpChangesDoNotBlockOtherAccounts(t *testing.T) {
	e := newEnv(t)
	hostile := e.createAccount(t, "hostile")
	victim := e.createAccount(t, "victim")
	audit := func(ctx *hangUpCtx, account string) store.WriteOption {
		return store.WithAudit(func(any) (schemas.Encoded, error) {
			ctx.armed.Store(true) // the batch is about to begin
			return schemas.Encoded{ID: schemas.NewID(schemas.PrefixEvent), Type: "event_destination_created.v0", AccountID: account, Data: []byte(`{}`)}, nil
		})
	}
	for range 60 {
		ctx := &hangUpCtx{Context: e.ctx}
		_, _ = e.store.CreateDestination(ctx, hostile.ID, kinesisDestination(), audit(ctx, hostile.ID))
	}
	ctx := &hangUpCtx{Context: e.ctx}
	if _, err := e.store.CreateDestination(e.ctx, victim.ID, kinesisDestination(), audit(ctx, victim.ID)); err != nil {
		t.Fatalf("another account's change after 60 hung-up changes: %v", err)
	}
}
