package pipeline

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/store"
)

// replayConsumerPrefix starts the name of every replay's durable consumer;
// it is not routeConsumerPrefix, so a replay's consumer is never taken for
// a route's.
const replayConsumerPrefix = "replay_"

// replayCheckTimeout bounds each call of a replay's worker to its
// consumer and to the store (see checkReplay): the worker waits for it
// instead of pulling.
const replayCheckTimeout = time.Second

// ReplayRecorder records the progress of replays. store.Replays
// implements it.
type ReplayRecorder interface {
	// AddReplayed adds n events of the replay's range to those it has
	// replayed to the destination.
	AddReplayed(ctx context.Context, accountID, id, destinationID string, n uint64) error
	// FinishReplay records that the replay has delivered its range to the
	// destination; the replay is done once every destination has it.
	FinishReplay(ctx context.Context, accountID, id, destinationID string) error
}

// ReplayConsumerName is the name of the durable consumer that delivers a
// replay to one destination: replay_<replay id>_<destination id>.
func ReplayConsumerName(replayID, destinationID string) string {
	return replayConsumerPrefix + replayID + "_" + destinationID
}

// isReplayConsumer reports whether a consumer name is a replay's.
func isReplayConsumer(name string) bool { return strings.HasPrefix(name, replayConsumerPrefix) }

// addReplayRoutes adds to routes one route per running replay and
// destination of its subscription that exists, delivering with the
// subscription as it is now.
func (c *configState) addReplayRoutes(routes map[string]Route) {
	for _, replay := range c.replays {
		sub, ok := c.subscriptions[stateKey(replay.AccountID, replay.SubscriptionID)]
		if !ok || len(sub.Sources) == 0 {
			continue
		}
		for _, id := range sub.DestinationIDs {
			dest, ok := c.destinations[stateKey(sub.AccountID, id)]
			if !ok || slices.Contains(replay.DeliveredTo, id) {
				continue
			}
			r := Route{Subscription: sub, Destination: dest, Since: replay.Since, Replay: &replay}
			routes[r.Name()] = r
		}
	}
}

// pastReplay reports whether msg, pulled by a replay's worker, was stored
// after the replay's range: live delivery has it, and the replay
// acknowledges it without delivering it.
func (w *worker) pastReplay(p *plan, msg jetstream.Msg) bool {
	if p.route.Replay == nil {
		return false
	}
	meta, err := msg.Metadata()
	return err == nil && meta.Sequence.Stream > p.route.Replay.EndSeq
}

// countReplayed counts msg, just acknowledged or terminated, among the
// events its replay's worker has replayed, if it is an event of the
// replay's range: its stream sequence is at most EndSeq (the consumer
// starts at the range's first). trackReplay records the count.
func (w *worker) countReplayed(msg jetstream.Msg) {
	replay := w.plan.Load().route.Replay
	if replay == nil {
		return
	}
	if meta, err := msg.Metadata(); err == nil && meta.Sequence.Stream <= replay.EndSeq {
		w.replayed.Add(1)
	}
}

// trackReplay, for a replay's worker, every DeliveryConfig.ReplayCheck,
// records the events the worker has replayed since it last did (see
// ReplayRecorder), and records that it has delivered the replay's range
// to its destination once its consumer holds no event of the range
// unsettled: every event up to EndSeq is acknowledged (or dead-lettered),
// or the consumer has nothing pending or unacknowledged at all. The
// reconciler then stops the worker and deletes the consumer. It runs
// apart from pulling, which waits while deliveries are slow, until the
// range is delivered or stop is closed; then it records what is left to
// record, within replayCheckTimeout.
func (w *worker) trackReplay(ctx context.Context, stop <-chan struct{}) {
	ticker := time.NewTicker(w.cfg.ReplayCheck)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			if w.replayed.Load() > 0 {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replayCheckTimeout)
				defer cancel()
				w.recordReplayed(ctx)
			}
			return
		case <-ticker.C:
			if w.checkReplay(ctx) {
				return
			}
		}
	}
}

// checkReplay records the events the worker has replayed, or that the
// replay's range is delivered to the worker's destination; it reports
// whether it is.
func (w *worker) checkReplay(ctx context.Context) bool {
	route := w.plan.Load().route
	replay := route.Replay
	ctx, cancel := context.WithTimeout(ctx, replayCheckTimeout)
	defer cancel()
	info, err := w.consumer.Info(ctx)
	if err != nil || !(info.AckFloor.Stream >= replay.EndSeq || (info.NumPending == 0 && info.NumAckPending == 0)) {
		// Not settled yet, or not known: asked again at the next check.
		w.recordReplayed(ctx)
		return false
	}
	if err := w.cfg.Replays.FinishReplay(ctx, replay.AccountID, replay.ID, route.Destination.ID); err != nil {
		w.log.Warn("marking a replay done failed; trying again", "replay_id", replay.ID, "error", err)
		w.recordReplayed(ctx)
		return false
	}
	// The destination's count is now the range's: what the worker
	// counted is no longer needed.
	w.replayed.Store(0)
	w.log.Info("replay delivered", "replay_id", replay.ID, "destination_id", route.Destination.ID)
	return true
}

// recordReplayed adds the events the worker replayed since it last did
// to its replay's count; if that fails, they are added at the next try.
func (w *worker) recordReplayed(ctx context.Context) {
	route := w.plan.Load().route
	n := w.replayed.Swap(0)
	if n == 0 {
		return
	}
	if err := w.cfg.Replays.AddReplayed(ctx, route.Replay.AccountID, route.Replay.ID, route.Destination.ID, n); err != nil {
		w.replayed.Add(n)
		w.log.Warn("counting the events a replay replayed failed; trying again", "replay_id", route.Replay.ID, "error", err)
	}
}

var _ ReplayRecorder = store.Replays{}
