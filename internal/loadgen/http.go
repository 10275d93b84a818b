package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/producer"
)

// shutdownTimeout bounds the shutdown of the benchmark's HTTP server.
const shutdownTimeout = 10 * time.Second

// prepareHTTP readies the ingest API as `sluice serve` runs it: a store
// holding an API key, a producer, and a net/http server on a loopback port.
// The request bodies are built before the clock starts; the timed part posts
// them, cfg.Concurrency at a time, and checks every response.
func prepareHTTP(ctx context.Context, env *environment) (func(context.Context) error, error) {
	st, err := store.Open(ctx, env.js, store.Config{})
	if err != nil {
		return nil, err
	}
	account, err := st.CreateAccount(ctx, "bench")
	if err != nil {
		return nil, err
	}
	key, err := st.CreateAPIKey(ctx, account.ID, store.APIKeyInput{Description: "sluice-bench"}, "")
	if err != nil {
		return nil, err
	}
	p, err := producer.New(env.nc, producer.Config{MaxPending: env.cfg.MaxPending})
	if err != nil {
		return nil, err
	}
	srv, err := newIngestAPI(st, p)
	if err != nil {
		return nil, err
	}
	url, err := serveHTTP(env, srv)
	if err != nil {
		return nil, err
	}

	transport := &http.Transport{
		MaxIdleConnsPerHost: env.cfg.Concurrency,
		DisableCompression:  true,
	}
	env.onClose(transport.CloseIdleConnections)
	c := &ingestClient{
		http:  &http.Client{Transport: transport},
		url:   url + "/events",
		token: key.Token,
	}
	bodies := requestBodies(env.workload.events, env.cfg.Batch)
	return func(ctx context.Context) error {
		return c.postAll(ctx, bodies, env.cfg.Concurrency)
	}, nil
}

// newIngestAPI returns sluice's HTTP API with POST /events routed on it
// (package ingest), as a serve process with the ingest role has it, on
// the key store and the publisher.
func newIngestAPI(keys apiconv.Keys, pub ingest.Publisher) (*api.Server, error) {
	log := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	srv, err := api.New(api.Config{}, api.Deps{Keys: keys, Publisher: pub, Logger: log, Metrics: reg})
	if err != nil {
		return nil, err
	}
	in, err := ingest.New(ingest.Config{}, ingest.Deps{Door: srv.FrontDoor(), Publisher: pub, Logger: log, Metrics: reg})
	if err != nil {
		return nil, err
	}
	srv.Handle(ingest.Pattern, in)
	return srv, nil
}

// serveHTTP serves handler on a free loopback port until the mode is over,
// and returns its base URL.
func serveHTTP(env *environment, handler http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listening on loopback: %w", err)
	}
	httpSrv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()
	env.onClose(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = httpSrv.Shutdown(ctx)
		<-served
	})
	return "http://" + ln.Addr().String(), nil
}

// ingestClient posts batches to POST /events.
type ingestClient struct {
	http  *http.Client
	url   string
	token string
}

// postAll posts every body, concurrency requests at a time, and stops at the
// first failure.
func (c *ingestClient) postAll(ctx context.Context, bodies []requestBody, concurrency int) error {
	g, ctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range concurrency {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(bodies) {
					return nil
				}
				if err := c.post(ctx, bodies[i]); err != nil {
					return fmt.Errorf("request %d: %w", i, err)
				}
			}
		})
	}
	return g.Wait()
}

// ingestResponse is the part of a 202 body the benchmark checks.
type ingestResponse struct {
	Stored int `json:"stored"`
}

// post sends one batch and checks that the API stored every event of it.
func (c *ingestClient) post(ctx context.Context, body requestBody) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body.json))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(apiconv.HeaderVersion, apiconv.SupportedVersion)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading the response: %w", err)
	}
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("%w: status %d: %.300s", ErrNotStored, resp.StatusCode, respBody)
	}
	var ingested ingestResponse
	if err := json.Unmarshal(respBody, &ingested); err != nil {
		return fmt.Errorf("decoding the response: %w", err)
	}
	if ingested.Stored != body.events {
		return fmt.Errorf("%w: %d of %d events stored", ErrNotStored, ingested.Stored, body.events)
	}
	return nil
}
