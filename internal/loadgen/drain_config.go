package loadgen

import (
	"errors"
	"fmt"
)

// Defaults of DrainConfig.
const (
	DefaultDrainEvents = 200_000
	DefaultDrainRounds = 5
	// DefaultDrainEventBytes is the size of the events of issue 16's
	// measurement.
	DefaultDrainEventBytes = 1800
)

// Floors and limits of the drain benchmark (issue 16): the least rate of
// each sluice mode as a share of the raw drain rate of the same run, and
// the most CPU time the bench process may spend per 1,000 events passed
// through.
const (
	PassThroughFloor = 0.55
	FilterFloor      = 0.70
	// PassThroughCPULimit is in milliseconds of CPU per 1,000 events.
	PassThroughCPULimit = 10.0
)

// DrainConfig says how to run the drain benchmark. The zero value gets
// the defaults, except Helper, which is required.
type DrainConfig struct {
	// Events is the backlog each mode drains in each round, half of which
	// the filter mode's filter passes; default DefaultDrainEvents. It must
	// be even.
	Events int `json:"events"`
	// EventBytes is about how large each event of the backlog is as
	// stored: the ~1 KB events of the other benchmarks are padded with a
	// request header up to it; default DefaultDrainEventBytes.
	EventBytes int `json:"event_bytes"`
	// Rounds is how many times every mode is measured, after a warm-up
	// round that is not reported; the report gives the medians. Default
	// DefaultDrainRounds.
	Rounds int `json:"rounds"`
	// Helper is the command line that starts a helper process of this
	// benchmark, to which RunDrain appends the helper's kind and flags;
	// the process must run ServeDrainHelper. `sluice-bench drain` gives
	// its own binary's hidden `bench drain-helper`. Required.
	Helper []string `json:"-"`
	// DataDir is where the NATS server makes its temporary directory,
	// which it removes when it stops; default the system's temporary
	// directory.
	DataDir string `json:"-"`
	// CPUProfileDir, when set, is where a CPU profile of the bench process
	// during every timed drain is written, as cpu-<mode>-<round>.pprof
	// (round 0 is the warm-up).
	CPUProfileDir string `json:"-"`
}

func (c *DrainConfig) setDefaults() {
	setDefault(&c.Events, DefaultDrainEvents)
	setDefault(&c.Rounds, DefaultDrainRounds)
	setDefault(&c.EventBytes, DefaultDrainEventBytes)
}

// Validate reports what is wrong with the configuration, after defaults have
// been applied to the fields left zero.
func (c DrainConfig) Validate() error {
	c.setDefaults()
	err := validateRuns(c.Events, c.Rounds)
	if c.EventBytes < 1 {
		err = errors.Join(err, fmt.Errorf("event bytes %d: must be at least 1", c.EventBytes))
	}
	if len(c.Helper) == 0 {
		err = errors.Join(err, fmt.Errorf("helper: the command of the helper processes is required"))
	}
	return err
}
