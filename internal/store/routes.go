package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// routeCount is the value of route_counts.<account_id>: the routes of the
// account as the last subscription write counted them. The count is for
// people reading the bucket; what bounds the routes is that every
// subscription create and update rewrites this key at the revision it read
// before counting (countRoutes).
type routeCount struct {
	Routes int `json:"routes"`
}

func routeCountKey(accountID string) string { return "route_counts." + accountID }

// countRoutes counts the routes the account would have once sub is written
// (each destination each of its subscriptions names, with sub as it will
// be) and returns the write of the count, at the revision of the key read
// before the subscriptions were listed: in the batch that writes sub, it
// makes any other subscription write of the account committed since fail
// its compare-and-swap, start over and count again, so that of concurrent
// writes, from any processes, each counts the others and together they
// never pass Limits.Routes.
//
// It returns a refusal holding a *LimitError (LimitRoutes, with Would) if
// the count is over the limit and the write adds routes: a write that
// keeps or lowers the routes of a subscription passes, so that an account
// over a lowered limit can still change its subscriptions and come under
// it.
func (s *Store) countRoutes(ctx context.Context, sub Subscription) (write, error) {
	key := routeCountKey(sub.AccountID)
	var rev uint64
	entry, err := s.kv.Get(ctx, key)
	switch {
	case err == nil:
		rev = entry.Revision()
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		return write{}, fmt.Errorf("reading the routes of account %s: %w", sub.AccountID, err)
	}
	all, err := listRecords[Subscription](ctx, s, "subscriptions."+sub.AccountID+".*") // subscriptions.filter, which refers to this function
	if err != nil {
		return write{}, fmt.Errorf("counting the routes of account %s: %w", sub.AccountID, err)
	}
	total, was := len(sub.DestinationIDs), 0
	for _, other := range all {
		if other.ID == sub.ID {
			was = len(other.DestinationIDs)
			continue
		}
		total += len(other.DestinationIDs)
	}
	if limit := s.limits.Routes; total > limit && len(sub.DestinationIDs) > was {
		return write{}, refusal{&LimitError{Limit: LimitRoutes, Max: limit, Would: total}}
	}
	value, err := json.Marshal(routeCount{Routes: total})
	if err != nil {
		return write{}, err
	}
	return write{key: key, value: value, revision: rev}, nil
}
