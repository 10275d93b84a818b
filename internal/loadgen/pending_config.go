package loadgen

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of PendingConfig.
const (
	DefaultPendingEvents = 1_000_000
	DefaultPendingHold   = 30 * time.Second
)

// PendingRSSLimit is the most resident memory the process may use with
// PendingConfig.Events (1,000,000 by default) events pending for a route
// whose destination takes none.
const PendingRSSLimit = 256 << 20

// Sinks of the pending benchmark.
const (
	// PendingSinkRefusing fails every write as an unavailable destination
	// does: the worker retries, keeps its events in progress, then hands
	// them back and pulls again.
	PendingSinkRefusing = "refusing"
	// PendingSinkBlocking never answers a write until delivery stops.
	PendingSinkBlocking = "blocking"
)

// PendingConfig says how to run the memory benchmark of a route whose
// destination takes nothing. The zero value gets the defaults.
type PendingConfig struct {
	// Events is how many events are published for the route; default
	// DefaultPendingEvents.
	Events int `json:"events"`
	// Hold is how long delivery keeps running once every event is
	// published, with the resident memory sampled; default
	// DefaultPendingHold.
	Hold time.Duration `json:"hold"`
	// Sink is PendingSinkRefusing (the default) or PendingSinkBlocking.
	Sink string `json:"sink"`
	// DataDir is where the server gets its temporary directory, removed
	// afterwards; default the system's temporary directory.
	DataDir string `json:"-"`
	// HeapProfile, when set, is the file a heap profile is written to at
	// the end of the hold.
	HeapProfile string `json:"-"`
}

func (c *PendingConfig) setDefaults() {
	setDefault(&c.Events, DefaultPendingEvents)
	setDefault(&c.Hold, DefaultPendingHold)
	setDefault(&c.Sink, PendingSinkRefusing)
}

// Validate reports what is wrong with the configuration, after defaults have
// been applied to the fields left zero.
func (c PendingConfig) Validate() error {
	c.setDefaults()
	var errs []error
	if c.Events < 1 {
		errs = append(errs, fmt.Errorf("events %d: must be at least 1", c.Events))
	}
	if c.Hold < 0 {
		errs = append(errs, fmt.Errorf("hold %s: must not be negative", c.Hold))
	}
	if c.Sink != PendingSinkRefusing && c.Sink != PendingSinkBlocking {
		errs = append(errs, fmt.Errorf("sink %q: must be %q or %q", c.Sink, PendingSinkRefusing, PendingSinkBlocking))
	}
	return errors.Join(errs...)
}
