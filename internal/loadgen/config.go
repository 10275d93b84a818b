package loadgen

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/schemas"
)

// Defaults of IngestConfig.
const (
	DefaultEvents      = 200_000
	DefaultBatch       = 500
	DefaultConcurrency = 4
	DefaultRuns        = 3
	// DefaultMaxPending is the producer's own default bound on
	// acknowledgements in flight.
	DefaultMaxPending = 4096
)

// Floors of the ingest benchmark: the least rate, as a share of the raw
// JetStream rate of the same run, that each way in must reach.
const (
	ProducerFloor = 0.7
	HTTPFloor     = 0.5
)

// IngestConfig says how to run the ingest benchmark. The zero value gets
// the defaults.
type IngestConfig struct {
	// Events is how many events each mode publishes in each run; default
	// DefaultEvents.
	Events int `json:"events"`
	// Batch is how many events one HTTP request carries; default
	// DefaultBatch. The last request carries the rest when Events is not a
	// multiple of Batch.
	Batch int `json:"batch"`
	// Concurrency is how many HTTP requests are in flight; default
	// DefaultConcurrency.
	Concurrency int `json:"concurrency"`
	// DataDir is where each server gets its own temporary directory,
	// removed after its mode; default the system's temporary directory.
	DataDir string `json:"-"`
	// Runs is how many times every mode is measured, after a warm-up round
	// that is not reported; the report gives the median. Default
	// DefaultRuns.
	Runs int `json:"runs"`
	// MaxPending bounds the acknowledgements in flight, for the raw loop and
	// the producer alike; default DefaultMaxPending.
	MaxPending int `json:"max_pending"`
	// CPUProfileDir, when set, is where a CPU profile of the timed part of
	// every measurement is written, as cpu-<mode>-<run>.pprof (run 0 is the
	// warm-up).
	CPUProfileDir string `json:"-"`
}

func (c *IngestConfig) setDefaults() {
	setDefault(&c.Events, DefaultEvents)
	setDefault(&c.Batch, DefaultBatch)
	setDefault(&c.Concurrency, DefaultConcurrency)
	setDefault(&c.Runs, DefaultRuns)
	setDefault(&c.MaxPending, DefaultMaxPending)
}

// Validate reports what is wrong with the configuration, after defaults have
// been applied to the fields left zero.
func (c IngestConfig) Validate() error {
	c.setDefaults()
	var errs []error
	for _, f := range []struct {
		name  string
		value int
	}{
		{"events", c.Events},
		{"batch", c.Batch},
		{"concurrency", c.Concurrency},
		{"runs", c.Runs},
		{"max pending", c.MaxPending},
	} {
		if f.value < 1 {
			errs = append(errs, fmt.Errorf("%s %d: must be at least 1", f.name, f.value))
		}
	}
	if c.Batch > schemas.DefaultMaxEvents {
		errs = append(errs, fmt.Errorf("batch %d: the ingest API takes at most %d events per request", c.Batch, schemas.DefaultMaxEvents))
	}
	return errors.Join(errs...)
}
