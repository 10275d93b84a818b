package firehose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluicehq/sluice/sinks"
)

// ErrTailNeedsEmulator is the error of TargetType's Tail without an
// emulator's endpoint: Firehose keeps no records to read back.
//
//lint:ignore ST1005 Firehose is the AWS service's name, a proper noun
var ErrTailNeedsEmulator = errors.New("Firehose keeps no records to read back: read its destination (an S3 bucket, ...) instead, or point AWS_ENDPOINT_URL_FIREHOSE (or AWS_ENDPOINT_URL) at sluice's emulator")

// tailReader reads the records a delivery stream of sluice's AWS emulator
// received, through its admin endpoint (sluice tail).
type tailReader struct {
	cfg     sinks.TailConfig
	name    string // the delivery stream's
	records string // the URL of the delivery stream's records
	client  *http.Client
}

// newTailReader returns the reader of the delivery stream cfg.Name of the
// emulator at the base endpoint of cfg.AWS, or, loaded from the
// environment, at AWS_ENDPOINT_URL_FIREHOSE or AWS_ENDPOINT_URL:
// TargetType's Tail.
func newTailReader(cfg sinks.TailConfig) (sinks.TailReader, error) {
	name := cfg.Name
	endpoint := aws.ToString(cfg.AWS.BaseEndpoint)
	if specific := os.Getenv("AWS_ENDPOINT_URL_FIREHOSE"); specific != "" && cfg.AWSFromEnvironment {
		endpoint = specific
	}
	if endpoint == "" {
		return nil, ErrTailNeedsEmulator
	}
	return &tailReader{
		cfg:     cfg,
		name:    name,
		records: strings.TrimSuffix(endpoint, "/") + "/_emulator/firehose/" + url.PathEscape(name) + "/records",
		client:  &http.Client{Timeout: 30 * time.Second},
	}, nil
}

// emulatorRecord is a record as the emulator answers it.
type emulatorRecord struct {
	ID      string    `json:"record_id"`
	Data    []byte    `json:"data"`
	Arrival time.Time `json:"arrival_time"`
}

// Read asks for the delivery stream's records, and emits those that
// arrived from Since (or now) on and were not emitted before; following,
// it asks again every Poll.
func (r *tailReader) Read(ctx context.Context, emit func(sinks.TailRecord) error) error {
	since := r.cfg.Since
	if since.IsZero() {
		since = time.Now()
	}
	seen := make(map[string]bool)
	for {
		records, err := r.fetch(ctx)
		if err != nil {
			return sinks.IgnoreEnd(ctx, err)
		}
		for _, rec := range records {
			if seen[rec.ID] || rec.Arrival.Before(since) {
				continue
			}
			seen[rec.ID] = true
			// A Firehose record may hold several newline-terminated
			// events; sluice writes one each.
			for _, line := range bytes.Split(bytes.TrimRight(rec.Data, "\n"), []byte("\n")) {
				if err := emit(sinks.TailRecord{Data: line, Where: rec.ID, Time: rec.Arrival}); err != nil {
					return err
				}
			}
		}
		if !r.cfg.Follow || !r.cfg.Wait(ctx) {
			return nil
		}
	}
}

// fetch asks the emulator for every record the delivery stream keeps.
func (r *tailReader) fetch(ctx context.Context) ([]emulatorRecord, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.records, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the emulator's Firehose records: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("reading the emulator's Firehose records: %w", err)
	}
	if resp.StatusCode == http.StatusNotFound && r.cfg.WaitsFor("Firehose delivery stream "+r.name) {
		// Following a delivery stream that does not exist yet may wait
		// for it.
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the emulator's Firehose records at %s: %s: %s", r.records, resp.Status, bytes.TrimSpace(body))
	}
	var page struct {
		Records []emulatorRecord `json:"records"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("reading the emulator's Firehose records at %s: %w", r.records, err)
	}
	return page.Records, nil
}
