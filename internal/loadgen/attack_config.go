package loadgen

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The attacks RunAttacks plays, in the order it plays them: the ones that
// may take the process down come last, so that a crash spoils as few
// figures as it can.
const (
	AttackLeaks      = "leaks"
	AttackBadJSON    = "bad-json"
	AttackForged     = "forged-audit"
	AttackDedup      = "dedup"
	AttackSlowloris  = "slowloris"
	AttackBigBodies  = "big-bodies"
	AttackFloods     = "floods"
	AttackFilterBomb = "filter-bombs"
	AttackFanOut     = "fan-out"
	AttackReadFlood  = "read-flood"
)

// AllAttacks returns every attack, in the order RunAttacks plays them.
func AllAttacks() []string {
	return []string{AttackLeaks, AttackBadJSON, AttackForged, AttackDedup, AttackSlowloris, AttackBigBodies, AttackFloods, AttackFilterBomb, AttackFanOut, AttackReadFlood}
}

// Defaults of AttackConfig.
const (
	DefaultAttackRate         = 200
	DefaultAttackBatch        = 10
	DefaultAttackBaseline     = 10 * time.Second
	DefaultAttackSettle       = 3 * time.Second
	DefaultAttackSlowUploads  = 64
	DefaultAttackSlowFor      = 20 * time.Second
	DefaultAttackSlowEvery    = 2 * time.Second
	DefaultAttackBigBodies    = 64
	DefaultAttackBigBodyBytes = 10<<20 - 4<<10
	DefaultAttackFloodCount   = 200
	DefaultAttackReplays      = 30
	DefaultAttackBombFor      = 30 * time.Second
	DefaultAttackFanOutEvents = 50_000
	// DefaultAttackReadFloodConcurrency is issue 23's flood: 48 list
	// requests at once.
	DefaultAttackReadFloodConcurrency = 48
	DefaultAttackReadFloodFor         = 10 * time.Second
	DefaultAttackDrainTimeout         = 60 * time.Second
	// DefaultAttackRequestTimeout bounds each of A's requests and each
	// request of an attack that is not meant to be slow.
	DefaultAttackRequestTimeout = 30 * time.Second
)

// AttackTarget is the running sluice the attacks are played against: its
// API, two accounts' tokens, and what it takes to measure the process.
type AttackTarget struct {
	// URL is the base URL of the HTTP API (--http), such as
	// http://127.0.0.1:8080. It must be a loopback address.
	URL string `json:"url"`
	// TokenA is an API key of account A, the victim; TokenB one of
	// account B, the attacker. They must be of two different accounts.
	TokenA string `json:"-"`
	TokenB string `json:"-"`
	// EmulatorURL is the AWS emulator of `sluice serve --dev`, where A's
	// events are read back from.
	EmulatorURL string `json:"emulator_url"`
	// MetricsURL is the base URL of the listener of /metrics
	// (--metrics-http), when the process has one apart from URL.
	MetricsURL string `json:"metrics_url,omitempty"`
	// PID is the process's id, for its resident memory, CPU time and
	// liveness; 0 measures none of them.
	PID int `json:"pid,omitempty"`
	// DataDir is the process's data directory, searched for the AWS
	// secrets of A's destination; empty skips that search.
	DataDir string `json:"data_dir,omitempty"`
	// MemoryLimit is the process's --memory-limit in bytes, for the
	// report; 0 when unknown.
	MemoryLimit int64 `json:"memory_limit_bytes,omitempty"`
}

// AttackConfig says how hard RunAttacks attacks. The zero value gets the
// defaults; every attack is bounded in count and time.
type AttackConfig struct {
	// Attacks are the attacks to play, of AllAttacks; default all.
	Attacks []string `json:"attacks"`
	// Rate is the events per second account A publishes throughout, in
	// requests of Batch events; default DefaultAttackRate and
	// DefaultAttackBatch.
	Rate  int `json:"rate"`
	Batch int `json:"batch"`
	// Baseline is how long A's figures are measured with no attack before
	// the first; default DefaultAttackBaseline.
	Baseline time.Duration `json:"baseline"`
	// Settle is how long A goes on being measured after each attack ends,
	// as part of that attack's figures; default DefaultAttackSettle.
	Settle time.Duration `json:"settle"`
	// SlowUploads slow uploads send a byte of a chunked body every
	// SlowEvery for SlowFor; default DefaultAttackSlowUploads,
	// DefaultAttackSlowEvery, DefaultAttackSlowFor.
	SlowUploads int           `json:"slow_uploads"`
	SlowFor     time.Duration `json:"slow_for"`
	SlowEvery   time.Duration `json:"slow_every"`
	// BigBodies concurrent bodies of BigBodyBytes of invalid events; default
	// DefaultAttackBigBodies and DefaultAttackBigBodyBytes.
	BigBodies    int `json:"big_bodies"`
	BigBodyBytes int `json:"big_body_bytes"`
	// FloodCount is the most destinations, subscriptions and API keys B
	// tries to make, each; Replays the replays it starts at once; default
	// DefaultAttackFloodCount and DefaultAttackReplays.
	FloodCount int `json:"flood_count"`
	Replays    int `json:"replays"`
	// BombFor is how long the filter bombs are left in place; default
	// DefaultAttackBombFor.
	BombFor time.Duration `json:"bomb_for"`
	// FanOutEvents is how many events B publishes through its fan-out
	// routes; default DefaultAttackFanOutEvents.
	FanOutEvents int `json:"fan_out_events"`
	// ReadFloodConcurrency is how many list requests B keeps in flight,
	// for ReadFloodFor, after A's reads were measured for as long with no
	// attack; default DefaultAttackReadFloodConcurrency and
	// DefaultAttackReadFloodFor.
	ReadFloodConcurrency int           `json:"read_flood_concurrency"`
	ReadFloodFor         time.Duration `json:"read_flood_for"`
	// DrainTimeout bounds the wait at the end for every event A got 202
	// for to be delivered; default DefaultAttackDrainTimeout.
	DrainTimeout time.Duration `json:"drain_timeout"`
	// RequestTimeout bounds each request that is not meant to be slow;
	// default DefaultAttackRequestTimeout.
	RequestTimeout time.Duration `json:"request_timeout"`
}

func (c *AttackConfig) setDefaults() {
	if len(c.Attacks) == 0 {
		c.Attacks = AllAttacks()
	}
	setDefault(&c.Rate, DefaultAttackRate)
	setDefault(&c.Batch, DefaultAttackBatch)
	setDefault(&c.Baseline, DefaultAttackBaseline)
	setDefault(&c.Settle, DefaultAttackSettle)
	setDefault(&c.SlowUploads, DefaultAttackSlowUploads)
	setDefault(&c.SlowFor, DefaultAttackSlowFor)
	setDefault(&c.SlowEvery, DefaultAttackSlowEvery)
	setDefault(&c.BigBodies, DefaultAttackBigBodies)
	setDefault(&c.BigBodyBytes, DefaultAttackBigBodyBytes)
	setDefault(&c.FloodCount, DefaultAttackFloodCount)
	setDefault(&c.Replays, DefaultAttackReplays)
	setDefault(&c.BombFor, DefaultAttackBombFor)
	setDefault(&c.FanOutEvents, DefaultAttackFanOutEvents)
	setDefault(&c.ReadFloodConcurrency, DefaultAttackReadFloodConcurrency)
	setDefault(&c.ReadFloodFor, DefaultAttackReadFloodFor)
	setDefault(&c.DrainTimeout, DefaultAttackDrainTimeout)
	setDefault(&c.RequestTimeout, DefaultAttackRequestTimeout)
}

// setDefault sets *v to def when it is the zero value: the defaulting of
// every benchmark's configuration.
func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Validate reports what is wrong with the configuration, after defaults have
// been applied to the fields left zero.
func (c AttackConfig) Validate() error {
	c.setDefaults()
	var errs []error
	for _, a := range c.Attacks {
		if !slices.Contains(AllAttacks(), a) {
			errs = append(errs, fmt.Errorf("attack %q: must be one of %s", a, strings.Join(AllAttacks(), ", ")))
		}
	}
	for _, n := range []struct {
		name  string
		value int
	}{{"rate", c.Rate}, {"batch", c.Batch}, {"slow uploads", c.SlowUploads}, {"big bodies", c.BigBodies}, {"big body bytes", c.BigBodyBytes}, {"flood count", c.FloodCount}, {"replays", c.Replays}, {"fan-out events", c.FanOutEvents}, {"read flood concurrency", c.ReadFloodConcurrency}} {
		if n.value < 1 {
			errs = append(errs, fmt.Errorf("%s %d: must be at least 1", n.name, n.value))
		}
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{{"baseline", c.Baseline}, {"settle", c.Settle}, {"slow for", c.SlowFor}, {"slow every", c.SlowEvery}, {"bomb for", c.BombFor}, {"read flood for", c.ReadFloodFor}, {"drain timeout", c.DrainTimeout}, {"request timeout", c.RequestTimeout}} {
		if d.value < 0 {
			errs = append(errs, fmt.Errorf("%s %s: must not be negative", d.name, d.value))
		}
	}
	if c.Batch > c.Rate {
		errs = append(errs, fmt.Errorf("batch %d is over the rate %d: A sends at least one request a second", c.Batch, c.Rate))
	}
	return errors.Join(errs...)
}

// Validate reports what is missing from the target.
func (t AttackTarget) Validate() error {
	var errs []error
	if err := checkLoopbackURL("the API's URL", t.URL); err != nil {
		errs = append(errs, err)
	}
	if err := checkLoopbackURL("the emulator's URL", t.EmulatorURL); err != nil {
		errs = append(errs, err)
	}
	if t.MetricsURL != "" {
		if err := checkLoopbackURL("the metrics URL", t.MetricsURL); err != nil {
			errs = append(errs, err)
		}
	}
	if t.TokenA == "" || t.TokenB == "" {
		errs = append(errs, errors.New("the API keys of accounts A and B are both needed"))
	} else if t.TokenA == t.TokenB {
		errs = append(errs, errors.New("the API keys of A and B are the same: give keys of two accounts"))
	}
	return errors.Join(errs...)
}
