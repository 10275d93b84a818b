package loadgen

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
)

// drainPollLoad is how often the end of the drain is looked for once
// publishing stops.
const drainPollLoad = 10 * time.Millisecond

// RunLoad runs sluice as one `sluice serve` process does, in this process,
// under load, and measures it end to end. It starts an embedded,
// file-backed JetStream server in a temporary directory under
// cfg.DataDir, the store with an account and an API key, the HTTP API on
// a loopback port, and the reconciler and the deliverer; it makes a
// destination (written to cfg.Sink) and a subscription of
// http_request_complete.v0 events whose filter passes half of them,
// through the store. Then it posts ~1 KB events to POST /events in
// batches for cfg.Duration, at cfg.Rate events per second or flat out,
// each stamped with its publish time, writing a line of figures to
// progress every cfg.Interval (progress may be io.Discard); then it waits
// up to cfg.DrainTimeout for the sink to accept every event the filter
// passes.
//
// The report gives the rates in and out, the latency from event_timestamp
// to the sink's acceptance (when its Write returned), the events never
// delivered and those delivered twice, and the resident memory; see
// LoadReport.CheckDelivered and LoadReport.CheckRSSGrowth.
//
// It returns an error if cfg is not valid, if the resident memory cannot
// be read (only Linux says), if the server, the API or the route cannot be
// set up, if the API does not store a batch (wrapping ErrNotStored), or
// ctx's error if ctx ends first.
func RunLoad(ctx context.Context, cfg LoadConfig, progress io.Writer) (report LoadReport, err error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return LoadReport{}, fmt.Errorf("load benchmark config: %w", err)
	}
	b, server, err := startMemoryRun(ctx, cfg.DataDir, "load")
	if err != nil {
		return LoadReport{}, err
	}
	var closers []func()
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		if closeErr := server.close(); closeErr != nil && err == nil {
			err = closeErr
		}
	}()
	log := slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: slog.LevelWarn}))

	recorder := newDeliveryRecorder(newRunToken())
	newSink, emu, err := loadSink(ctx, cfg.Sink, &closers)
	if err != nil {
		return LoadReport{}, err
	}
	route, err := startLoadDelivery(ctx, server, recordingFactory(newSink, recorder), log)
	if err != nil {
		return LoadReport{}, err
	}
	closers = append(closers, route.stop)
	if err := createLoadRoute(ctx, server, cfg.Sink); err != nil {
		return LoadReport{}, err
	}
	if err := route.waitReady(ctx); err != nil {
		return LoadReport{}, err
	}
	client, err := startLoadAPI(ctx, server, cfg.Concurrency, &closers)
	if err != nil {
		return LoadReport{}, err
	}
	pub := &loadPublisher{client: client, backlog: b, token: recorder.token, rate: cfg.Rate, batch: cfg.Batch, concurrency: cfg.Concurrency}

	report = newLoadReport(cfg)
	fmt.Fprintf(progress, "publishing ~1 KB http_request_complete.v0 events to POST /events for %s, %s, %d a request, %d requests at most in flight; sink %s\n",
		cfg.Duration, rateText(cfg.Rate), cfg.Batch, cfg.Concurrency, cfg.Sink)
	start := time.Now()
	err = report.sampleWhile(ctx, cfg.Interval, start, pub, recorder, progress, func(ctx context.Context) error {
		return pub.run(ctx, cfg.Duration)
	})
	if err != nil {
		return LoadReport{}, err
	}
	publishEnd := time.Now()
	published := pub.published.Load()
	drainErr := waitLoadDrained(ctx, recorder, uint64(passing(int(published))), cfg.DrainTimeout)
	if ctx.Err() != nil {
		return LoadReport{}, ctx.Err()
	}
	report.finish(start, publishEnd, pub, recorder)
	report.DrainTimedOut = drainErr != nil
	if emu != nil {
		put := emu.server.Counters(emulator.ServiceKinesis, benchSinks[0].resource).ByOperation["PutRecords"]
		report.EmulatorRecords = put.RecordsAccepted
	}
	if _, report.PeakRSS, err = readRSS(); err != nil {
		return LoadReport{}, err
	}
	return report, nil
}

// rateText describes the publish rate.
func rateText(rate int) string {
	if rate == 0 {
		return "flat out"
	}
	return fmt.Sprintf("%d events/s", rate)
}

// loadSink returns the factory of the sink named: every destination writes
// to one null sink, or to an emulator started here (returned, to read its
// counters), stopped by the closers.
func loadSink(ctx context.Context, name string, closers *[]func()) (pipeline.SinkFactory, *benchEmulator, error) {
	if name == LoadSinkNull {
		return newNullSink(math.MaxInt64).factory, nil, nil
	}
	emu, stop, err := startEmulator(ctx)
	if err != nil {
		return nil, nil, err
	}
	*closers = append(*closers, stop)
	factory := destinations.Factory{Endpoint: emu.endpoint}
	return factory.New, emu, nil
}

// createLoadRoute makes the benchmark's destination and subscription
// through the store: a Kinesis stream, written to in the emulator by the
// emulator sink (the null sink ignores the target).
func createLoadRoute(ctx context.Context, s *deliveryServer, sink string) error {
	if sink == LoadSinkNull {
		_, err := s.createRoute(ctx, deliverSource())
		return err
	}
	auth := store.AWSAuth{Creds: &store.AWSCreds{AccessKeyID: "AKIASLUICEBENCH00000", SecretAccessKey: "sluice-bench"}}
	_, err := s.createRouteTo(ctx, deliverSource(), benchSinks[0].target(auth))
	return err
}

// loadDelivery is the reconciler and the deliverer, as `sluice serve` runs
// them, delivery metrics included.
type loadDelivery struct {
	deliverer *pipeline.Deliverer
	ready     chan struct{} // closed when the reconciler first applies a route
	readyOnce sync.Once
	cancel    context.CancelFunc
	done      chan struct{}
}

// startLoadDelivery starts the reconciler of the store's routes, which
// hands them to the deliverer.
func startLoadDelivery(ctx context.Context, s *deliveryServer, newSink pipeline.SinkFactory, log *slog.Logger) (*loadDelivery, error) {
	metrics, err := pipeline.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		return nil, err
	}
	d := &loadDelivery{
		deliverer: pipeline.NewDeliverer(s.js, s.stream, s.filters, newSink, pipeline.DeliveryConfig{Metrics: metrics}, log),
		ready:     make(chan struct{}),
		done:      make(chan struct{}),
	}
	rec := pipeline.NewReconciler(s.stream, s.store, pipeline.ReconcilerConfig{}, log, func(ctx context.Context, routes map[string]pipeline.Route) {
		d.deliverer.Apply(ctx, routes)
		if len(routes) > 0 {
			d.readyOnce.Do(func() { close(d.ready) })
		}
	})
	runCtx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	go func() {
		defer close(d.done)
		_ = rec.Run(runCtx)
	}()
	return d, nil
}

// waitReady waits until the reconciler has handed a route to the
// deliverer.
func (d *loadDelivery) waitReady(ctx context.Context) error {
	t := time.NewTimer(routeReadyTimeout)
	defer t.Stop()
	select {
	case <-d.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("the route was not applied within %s", routeReadyTimeout)
	}
}

// stop stops the reconciler and every worker, and waits for them.
func (d *loadDelivery) stop() {
	d.cancel()
	<-d.done
	d.deliverer.Stop()
}

// startLoadAPI serves the API as `sluice serve` builds it for ingest (an
// API key of the account, the producer, metrics) on a loopback port, and
// returns a client of POST /events with the key.
func startLoadAPI(ctx context.Context, s *deliveryServer, concurrency int, closers *[]func()) (*ingestClient, error) {
	key, err := s.store.CreateAPIKey(ctx, s.account, store.APIKeyInput{Description: "sluice-bench load"}, "")
	if err != nil {
		return nil, err
	}
	p, err := producer.New(s.nc, producer.Config{})
	if err != nil {
		return nil, err
	}
	srv, err := newIngestAPI(s.store, p)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	httpSrv := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()
	transport := &http.Transport{MaxIdleConnsPerHost: concurrency, DisableCompression: true}
	*closers = append(*closers, func() {
		transport.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = httpSrv.Shutdown(ctx)
		<-served
	})
	return &ingestClient{
		http:  &http.Client{Transport: transport},
		url:   "http://" + ln.Addr().String() + "/events",
		token: key.Token,
	}, nil
}

// waitLoadDrained waits until the sink has accepted want distinct events,
// or timeout passes (an error), or ctx ends.
func waitLoadDrained(ctx context.Context, r *deliveryRecorder, want uint64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(drainPollLoad)
	defer t.Stop()
	for {
		if r.state().distinct >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// goRuntime describes where the benchmark ran.
func goRuntime() (version string, procs, cpus int) {
	return runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU()
}
