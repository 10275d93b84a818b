package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/sluicehq/sluice/internal/natstest"
)

// laggingReads answers the first read of an index key, key, by
// the key-value API or the stream, as a replica that has not applied the
// write of the key yet: not found. Direct gets, which both are on a
// bucket, may be answered by such a replica.
type laggingReads struct {
	jetstream.KeyValue
	key   string
	stale int // reads still to answer stale
}

func (l *laggingReads) lag(subject string) bool {
	if l.stale > 0 && strings.HasSuffix(subject, l.key) {
		l.stale--
		return true
	}
	return false
}

func (l *laggingReads) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if l.lag(key) {
		return nil, jetstream.ErrKeyNotFound
	}
	return l.KeyValue.Get(ctx, key)
}

type laggingStream struct {
	jetstream.Stream
	reads *laggingReads
}

func (s laggingStream) GetLastMsgForSubject(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	if s.reads.lag(subject) {
		return nil, jetstream.ErrMsgNotFound
	}
	return s.Stream.GetLastMsgForSubject(ctx, subject)
}

// TestReleaseAfterAStaleRead checks that a delete or rename whose read of
// the name's index key is stale still removes the key: the name is free
// afterwards, and not taken for good by no bot user.
func TestReleaseAfterAStaleRead(t *testing.T) {
	for _, change := range []string{"delete", "rename"} {
		t.Run(change, func(t *testing.T) {
			s, ctx := newFamilyTestStore(t)
			account, err := s.CreateAccount(ctx, "team")
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.CreateBotUser(ctx, account.ID, BotUser{Name: "deploy"})
			if err != nil {
				t.Fatal(err)
			}
			reads := &laggingReads{KeyValue: s.kv, key: botUsers.unique.key(account.ID, "deploy"), stale: 1}
			kv, stream := s.kv, s.stream
			s.kv, s.stream = reads, laggingStream{Stream: stream, reads: reads}
			if change == "delete" {
				_, err = s.DeleteBotUser(ctx, account.ID, b.ID)
			} else {
				_, err = s.UpdateBotUser(ctx, account.ID, b.ID, func(u *BotUser) error { u.Name = "release"; return nil })
			}
			s.kv, s.stream = kv, stream
			if err != nil {
				t.Fatalf("%s: %v", change, err)
			}
			if reads.stale != 0 {
				t.Fatalf("the %s read no index key", change)
			}
			_, err = s.CreateBotUser(ctx, account.ID, BotUser{Name: "deploy"})
			var taken *TakenError
			if errors.As(err, &taken) {
				t.Fatalf("after a stale read during the %s, the name stays taken by no bot user: %v", change, err)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// newFamilyTestStore opens a store on a NATS server of the test's own.
func newFamilyTestStore(t *testing.T) (*Store, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	_, js := natstest.Connect(t, natstest.Start(t))
	s, err := Open(ctx, js, Config{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, ctx
}
