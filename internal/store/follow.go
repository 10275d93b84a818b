package store

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/retry"
)

// followRetry is how soon followKeys watches again after a watch ended.
const followRetry = time.Second

// keyFollower is what followKeys tells of a watch: started once the
// watch's consumer exists, each entry of it (nil: the initial values are
// in), and ended when it has ended; nil funcs are not called.
type keyFollower struct {
	started func()
	entry   func(jetstream.KeyValueEntry)
	ended   func()
}

// followKeys watches the keys matching filters until ctx ends, watching
// again followRetry after a watch ends (logged, with what the process
// does meanwhile: what names the watch and says so).
func (s *Store) followKeys(ctx context.Context, log *slog.Logger, what string, filters []string, opts []jetstream.WatchOpt, f keyFollower) {
	for {
		err := s.watchKeys(ctx, filters, opts, f)
		if f.ended != nil {
			f.ended()
		}
		if ctx.Err() != nil {
			return
		}
		log.Warn("watching "+what+" failed; watching again", "error", err)
		if retry.Sleep(ctx, followRetry) != nil {
			return
		}
	}
}

// watchKeys runs one watch to its end.
func (s *Store) watchKeys(ctx context.Context, filters []string, opts []jetstream.WatchOpt, f keyFollower) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// WatchFiltered rewrites the filters in place, into subjects: each
	// watch gets a copy, or the next would watch subjects of subjects.
	watcher, err := s.kv.WatchFiltered(ctx, slices.Clone(filters), opts...)
	if err != nil {
		return err
	}
	defer func() {
		_ = watcher.Stop()
		for range watcher.Updates() { // it may be handing one over
		}
	}()
	if f.started != nil {
		f.started()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case entry, ok := <-watcher.Updates():
			if !ok {
				return errors.New("the watch ended")
			}
			if f.entry != nil {
				f.entry(entry)
			}
		}
	}
}

// followCurrent calls apply with every key matching filters and its entry,
// then with each change of them, until ctx ends; a nil entry is a key
// deleted. apply is called from one goroutine at a time. When a watch ends
// it watches again, and once the new watch's initial values are in it
// calls apply with the deletion of each key it told of before that the
// new watch did not: what apply built from the changes stays true
// meanwhile, and is never left with a key deleted while no watch ran.
// ready, if not nil, is called once the first watch's initial values are
// in.
func (s *Store) followCurrent(ctx context.Context, log *slog.Logger, what string, filters []string, apply func(key string, entry jetstream.KeyValueEntry), ready func()) {
	known := make(map[string]struct{}) // keys apply holds
	var seen map[string]struct{}       // keys of this watch, until its initial values are in
	s.followKeys(ctx, log, what, filters, nil, keyFollower{
		started: func() { seen = make(map[string]struct{}) },
		entry: func(entry jetstream.KeyValueEntry) {
			if entry == nil {
				for key := range known {
					if _, ok := seen[key]; !ok {
						delete(known, key)
						apply(key, nil)
					}
				}
				seen = nil
				if ready != nil {
					ready()
					ready = nil
				}
				return
			}
			key := entry.Key()
			if entry.Operation() != jetstream.KeyValuePut {
				delete(known, key)
				apply(key, nil)
				return
			}
			if seen != nil {
				seen[key] = struct{}{}
			}
			known[key] = struct{}{}
			apply(key, entry)
		},
	})
}
