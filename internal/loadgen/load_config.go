package loadgen

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of LoadConfig.
const (
	DefaultLoadDuration     = 20 * time.Second
	DefaultLoadInterval     = 5 * time.Second
	DefaultLoadBatch        = 100
	DefaultLoadConcurrency  = 4
	DefaultLoadDrainTimeout = 2 * time.Minute
)

// Sinks of the load benchmark.
const (
	// LoadSinkNull accepts every record at once, in process.
	LoadSinkNull = "null"
	// LoadSinkEmulator is sluice's AWS emulator in process, written to
	// through a Kinesis destination and the AWS SDK over loopback.
	LoadSinkEmulator = "emulator"
)

// LoadConfig says how to run the load benchmark. The zero value gets the
// defaults.
type LoadConfig struct {
	// Sink is LoadSinkNull (the default) or LoadSinkEmulator.
	Sink string `json:"sink"`
	// Rate is the events per second published; 0 publishes flat out.
	Rate int `json:"rate"`
	// Duration is how long events are published; default
	// DefaultLoadDuration.
	Duration time.Duration `json:"duration"`
	// Interval is how often a line of figures is written and the resident
	// memory sampled; default DefaultLoadInterval.
	Interval time.Duration `json:"interval"`
	// Batch is how many events one HTTP request carries; default
	// DefaultLoadBatch.
	Batch int `json:"batch"`
	// Concurrency is how many HTTP requests are in flight at most; default
	// DefaultLoadConcurrency.
	Concurrency int `json:"concurrency"`
	// DrainTimeout bounds the wait, once publishing stops, for the sink to
	// accept every event the filter passes; default DefaultLoadDrainTimeout.
	DrainTimeout time.Duration `json:"drain_timeout"`
	// MaxRSSGrowth, when positive, is the most the median resident memory
	// of the last third of the intervals may exceed that of the second
	// third, as a share (0.2 is 20%); see LoadReport.CheckRSSGrowth.
	MaxRSSGrowth float64 `json:"max_rss_growth"`
	// DataDir is where the server gets its temporary directory, removed
	// afterwards; default the system's temporary directory.
	DataDir string `json:"-"`
}

func (c *LoadConfig) setDefaults() {
	setDefault(&c.Sink, LoadSinkNull)
	setDefault(&c.Duration, DefaultLoadDuration)
	setDefault(&c.Interval, DefaultLoadInterval)
	setDefault(&c.Batch, DefaultLoadBatch)
	setDefault(&c.Concurrency, DefaultLoadConcurrency)
	setDefault(&c.DrainTimeout, DefaultLoadDrainTimeout)
}

// Validate reports what is wrong with the configuration, after defaults have
// been applied to the fields left zero.
func (c LoadConfig) Validate() error {
	c.setDefaults()
	var errs []error
	if c.Sink != LoadSinkNull && c.Sink != LoadSinkEmulator {
		errs = append(errs, fmt.Errorf("sink %q: must be %q or %q", c.Sink, LoadSinkNull, LoadSinkEmulator))
	}
	if c.Rate < 0 {
		errs = append(errs, fmt.Errorf("rate %d: must not be negative", c.Rate))
	}
	if c.Duration < 0 || c.Interval < 0 || c.DrainTimeout < 0 {
		errs = append(errs, fmt.Errorf("duration %s, interval %s, drain timeout %s: must not be negative", c.Duration, c.Interval, c.DrainTimeout))
	}
	if c.Batch < 1 || c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("batch %d, concurrency %d: must be at least 1", c.Batch, c.Concurrency))
	}
	if c.MaxRSSGrowth < 0 {
		errs = append(errs, fmt.Errorf("max RSS growth %g: must not be negative", c.MaxRSSGrowth))
	}
	return errors.Join(errs...)
}
