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

// replayCheckInterval is how often a replay's worker asks its consumer
// whether every event of the replay's range has been settled.
const replayCheckInterval = time.Second

// ReplayFinisher marks replays done. *store.Store implements it.
type ReplayFinisher interface {
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

// checkReplay records that a replay's worker has delivered the replay's
// range to its destination (see ReplayFinisher), at most every
// replayCheckInterval, once its consumer holds no event of the range
// unsettled: every event up to EndSeq is acknowledged (or dead-lettered),
// or the consumer has nothing pending or unacknowledged at all. The
// reconciler then stops the worker and deletes the consumer.
func (w *worker) checkReplay(ctx context.Context) {
	replay := w.plan.Load().route.Replay
	if replay == nil || w.replayFinished || w.cfg.Replays == nil || time.Since(w.replayChecked) < replayCheckInterval {
		return
	}
	w.replayChecked = time.Now()
	ctx, cancel := context.WithTimeout(ctx, replayCheckInterval)
	defer cancel()
	info, err := w.consumer.Info(ctx)
	if err != nil {
		return // asked again at the next check
	}
	settled := info.AckFloor.Stream >= replay.EndSeq || (info.NumPending == 0 && info.NumAckPending == 0)
	if !settled {
		return
	}
	if err := w.cfg.Replays.FinishReplay(ctx, replay.AccountID, replay.ID, w.plan.Load().route.Destination.ID); err != nil {
		w.log.Warn("marking a replay done failed; trying again", "replay_id", replay.ID, "error", err)
		return
	}
	w.replayFinished = true
	w.log.Info("replay delivered", "replay_id", replay.ID, "destination_id", w.plan.Load().route.Destination.ID)
}

var _ ReplayFinisher = (*store.Store)(nil)
