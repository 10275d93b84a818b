package pipeline

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/internal/defaults"
)

// DefaultScrapeTimeout bounds the JetStream requests of a scrape of
// StreamCollector and PendingCollector.
const DefaultScrapeTimeout = 2 * time.Second

// StreamCollector reports the size of SLUICE_EVENTS and SLUICE_DLQ, asking
// JetStream at each scrape, for at most timeout (default
// DefaultScrapeTimeout). A stream JetStream does not describe in time is
// left out of that scrape, so that /metrics still answers.
func StreamCollector(js jetstream.JetStream, timeout time.Duration) prometheus.Collector {
	defaults.Positive(&timeout, DefaultScrapeTimeout)
	return &streamCollector{
		js: js, timeout: timeout,
		messages: prometheus.NewDesc("sluice_stream_messages", "Messages stored in a JetStream stream of sluice: SLUICE_EVENTS (events within retention) or SLUICE_DLQ (dead letters).", []string{"stream"}, nil),
		bytes:    prometheus.NewDesc("sluice_stream_bytes", "Bytes stored in a JetStream stream of sluice: SLUICE_EVENTS or SLUICE_DLQ.", []string{"stream"}, nil),
	}
}

type streamCollector struct {
	js              jetstream.JetStream
	timeout         time.Duration
	messages, bytes *prometheus.Desc
}

func (c *streamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.messages
	ch <- c.bytes
}

func (c *streamCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, name := range []string{EventsStream, DLQStream} {
		stream, err := c.js.Stream(ctx, name)
		if err != nil {
			continue
		}
		state := stream.CachedInfo().State
		ch <- prometheus.MustNewConstMetric(c.messages, prometheus.GaugeValue, float64(state.Msgs), name)
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(state.Bytes), name)
	}
}

// PendingCollector reports, for each route the deliverer delivers, the
// events its consumer holds for it: not yet handed out, and handed out but
// not yet acknowledged. It lists the consumers of the events stream at each
// scrape (one paged request, however many routes), for at most timeout
// (default DefaultScrapeTimeout); a scrape JetStream does not answer in
// time reports the routes it got. Every worker process reports the same
// consumers: aggregate them with max, not sum.
//
// It reads JetStream at scrape time rather than keeping gauges the
// reconciler updates: the figures are as fresh as the scrape, and a
// process that is not scraped asks nothing.
func (d *Deliverer) PendingCollector(timeout time.Duration) prometheus.Collector {
	defaults.Positive(&timeout, DefaultScrapeTimeout)
	return &pendingCollector{
		deliverer: d, timeout: timeout,
		pending:    prometheus.NewDesc("sluice_route_pending_events", "Events of a route's sources in SLUICE_EVENTS not yet handed to a worker (its consumer's pending count). Labelled with the ids of routes that exist.", routeLabels, nil),
		ackPending: prometheus.NewDesc("sluice_route_ack_pending_events", "Events of a route handed to a worker and not yet acknowledged: being delivered or retried. Labelled with the ids of routes that exist.", routeLabels, nil),
	}
}

type pendingCollector struct {
	deliverer           *Deliverer
	timeout             time.Duration
	pending, ackPending *prometheus.Desc
}

func (c *pendingCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.ackPending
}

func (c *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	routes := c.deliverer.delivering.Load()
	if routes == nil || len(*routes) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	infos := c.deliverer.stream.ListConsumers(ctx)
	for info := range infos.Info() {
		route, ok := (*routes)[info.Name]
		if !ok || route.Replay != nil { // a replay would repeat its live route's series
			continue
		}
		values := []string{route.Subscription.AccountID, route.Subscription.ID, route.Destination.ID}
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(info.NumPending), values...)
		ch <- prometheus.MustNewConstMetric(c.ackPending, prometheus.GaugeValue, float64(info.NumAckPending), values...)
	}
}
