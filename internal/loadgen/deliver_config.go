package loadgen

import (
	"errors"
	"fmt"
)

// Defaults of DeliverConfig.
const (
	DefaultDeliverEvents = 200_000
	// DefaultDeliverRuns is higher than the ingest benchmark's: a drain
	// takes a second or two, so another process's burst on a shared
	// machine moves a single rate by half.
	DefaultDeliverRuns = 5
)

// DeliverFloor is the least rate, as a share of the raw JetStream drain
// rate of the same run, at which sluice must drain a route into the null
// sink.
const DeliverFloor = 0.6

// DeliverConfig says how to run the delivery benchmark. The zero value
// gets the defaults.
type DeliverConfig struct {
	// Events is the backlog each mode drains in each run, half of which
	// the route's filter passes; default DefaultDeliverEvents. It must be
	// even.
	Events int `json:"events"`
	// Runs is how many times every mode is measured, after a warm-up round
	// that is not reported; the report gives the median. Default
	// DefaultDeliverRuns.
	Runs int `json:"runs"`
	// DataDir is where each server gets its own temporary directory,
	// removed after its mode; default the system's temporary directory.
	DataDir string `json:"-"`
	// CPUProfileDir, when set, is where a CPU profile of the timed part of
	// every measurement is written, as cpu-<mode>-<run>.pprof (run 0 is the
	// warm-up).
	CPUProfileDir string `json:"-"`
}

func (c *DeliverConfig) setDefaults() {
	setDefault(&c.Events, DefaultDeliverEvents)
	setDefault(&c.Runs, DefaultDeliverRuns)
}

// Validate reports what is wrong with the configuration, after defaults have
// been applied to the fields left zero.
func (c DeliverConfig) Validate() error {
	c.setDefaults()
	return validateRuns(c.Events, c.Runs)
}

// validateRuns reports what is wrong with the backlog of events, half of
// which the route's filter passes, and the count of runs of a benchmark
// that drains a route: the delivery and the sinks benchmarks.
func validateRuns(events, runs int) error {
	var errs []error
	if events < 2 || events%2 != 0 {
		errs = append(errs, fmt.Errorf("events %d: must be an even number, at least 2 (the filter passes half)", events))
	}
	if runs < 1 {
		errs = append(errs, fmt.Errorf("runs %d: must be at least 1", runs))
	}
	return errors.Join(errs...)
}
