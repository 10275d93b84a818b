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
