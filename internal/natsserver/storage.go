package natsserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/sluicehq/sluice/internal/defaults"
)

// ErrStorageFull is wrapped by StorageWatch.Err while the disk JetStream
// stores on has no space left.
var ErrStorageFull = errors.New("JetStream's storage is full: the disk has no space left")

// ErrStorageRefusesWrites is wrapped by StorageWatch.Err while JetStream's
// store refuses writes for another reason than a full disk (the server's
// message says which).
var ErrStorageRefusesWrites = errors.New("JetStream's storage refuses writes")

// Defaults of StorageWatchConfig.
const (
	DefaultStorageCheckInterval = 250 * time.Millisecond
	DefaultStorageProbeInterval = time.Second
	// DefaultStorageProbeBytes is room for the largest message and its
	// index, with a margin: less free space than that is still full.
	DefaultStorageProbeBytes = 2 * MaxPayload
)

// StorageWatchConfig tunes a StorageWatch. The zero value gets the
// defaults.
type StorageWatchConfig struct {
	// CheckInterval is how often the watch asks the server whether its
	// streams take writes; default DefaultStorageCheckInterval.
	CheckInterval time.Duration
	// ProbeInterval is how often, while writes are refused, the watch
	// checks whether space has returned; default
	// DefaultStorageProbeInterval.
	ProbeInterval time.Duration
	// ProbeBytes is how much the watch writes (and removes) to check that
	// space has returned; default DefaultStorageProbeBytes.
	ProbeBytes int
	// Logger receives what the watch finds and does; nil discards it.
	Logger *slog.Logger
}

func (c *StorageWatchConfig) setDefaults() {
	defaults.Positive(&c.CheckInterval, DefaultStorageCheckInterval)
	defaults.Positive(&c.ProbeInterval, DefaultStorageProbeInterval)
	defaults.Positive(&c.ProbeBytes, DefaultStorageProbeBytes)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// StorageWatch watches whether the embedded server's JetStream store takes
// writes, and brings it back when it does not and space has returned.
//
// A stream of the server whose file store fails a write (ENOSPC, EIO)
// keeps that error for good: it refuses every later write without
// answering the publisher, until JetStream starts again. So the watch asks
// the server (its health check, which reports a stream's write error)
// every CheckInterval; while a write error stands, Err says so, and every
// ProbeInterval the watch writes ProbeBytes next to the store. Once that
// succeeds, it restarts JetStream, which reopens every stream and consumer
// from its files, completing an atomic batch a failed write cut short:
// nothing acknowledged is lost, since the server acknowledges a message
// only after its write succeeded.
//
// Its methods are safe for concurrent use.
type StorageWatch struct {
	srv *Server
	cfg StorageWatchConfig

	mu     sync.Mutex
	err    error
	failed chan struct{} // closed when err becomes non-nil; a new one once it is nil again

	// Owned by Run: a restart that did not clear the error doubles the
	// wait before the next one (up to maxRestartWait), so that a fault
	// the probe cannot see (a failing disk, a permission) does not have
	// JetStream recover every stream once a second.
	restartWait time.Duration
	nextRestart time.Time
}

// maxRestartWait is the longest wait between two restarts of JetStream
// that did not clear its storage's error.
const maxRestartWait = time.Minute

// NewStorageWatch returns a watch of the server's storage; Run runs it.
func (s *Server) NewStorageWatch(cfg StorageWatchConfig) *StorageWatch {
	cfg.setDefaults()
	return &StorageWatch{srv: s, cfg: cfg, failed: make(chan struct{})}
}

// Err returns nil while JetStream's store takes writes, and otherwise an
// error wrapping ErrStorageFull or ErrStorageRefusesWrites.
func (w *StorageWatch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Failed returns a channel that is closed once the store refuses writes:
// at once if it does now.
func (w *StorageWatch) Failed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

// Run watches the storage until ctx ends, and returns nil then.
func (w *StorageWatch) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		next := w.cfg.CheckInterval
		if err := w.check(); err != nil {
			next = w.cfg.ProbeInterval
			w.recover(err)
		}
		timer.Reset(next)
	}
}

// check asks the server whether its streams take writes, records the
// answer and returns it.
func (w *StorageWatch) check() error {
	var err error
	health := w.srv.srv.Healthz(&server.HealthzOptions{})
	switch {
	case !w.srv.srv.JetStreamEnabled():
		// The server turned JetStream off (it does on a permission error
		// while writing), or a restart of the watch's failed.
		err = fmt.Errorf("%w (JetStream is off: %s)", ErrStorageRefusesWrites, health.Error)
	case strings.Contains(health.Error, "no space left"):
		err = fmt.Errorf("%w (%s)", ErrStorageFull, health.Error)
	case strings.Contains(health.Error, "write error"):
		// Only a write error is the store's: another failure of the health
		// check (a stream not recovered) is not for the watch to mend.
		err = fmt.Errorf("%w (%s)", ErrStorageRefusesWrites, health.Error)
	}
	w.set(err)
	return err
}

// set records err as the state of the storage, logging a change.
func (w *StorageWatch) set(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil && w.err == nil:
		w.cfg.Logger.Error("JetStream's storage refuses writes: events and changes are refused until it takes them again", "error", err)
		close(w.failed)
	case err == nil && w.err != nil:
		w.cfg.Logger.Info("JetStream's storage takes writes again")
		w.failed = make(chan struct{})
	}
	w.err = err
}

// recover restarts JetStream if space has returned, so that its streams
// drop the write error they keep.
func (w *StorageWatch) recover(cause error) {
	if time.Now().Before(w.nextRestart) {
		return
	}
	if err := w.probe(); err != nil {
		w.cfg.Logger.Debug("no space yet for JetStream's storage", "error", err)
		return
	}
	w.cfg.Logger.Warn("space has returned: restarting JetStream to reopen its streams", "cause", cause)
	start := time.Now()
	err := w.srv.restartJetStream()
	if err == nil {
		err = w.check()
	}
	if err != nil {
		w.restartWait = min(max(2*w.restartWait, w.cfg.ProbeInterval), maxRestartWait)
		w.nextRestart = time.Now().Add(w.restartWait)
		w.cfg.Logger.Error("JetStream restarted, but its storage still refuses writes", "error", err, "next_restart_in", w.restartWait)
		return
	}
	w.restartWait, w.nextRestart = 0, time.Time{}
	w.cfg.Logger.Info("JetStream restarted", "took", time.Since(start))
}

// probe writes ProbeBytes in JetStream's directory (or the store's, before
// JetStream made its own) and removes them, and returns the error of the
// write.
func (w *StorageWatch) probe() error {
	dir := filepath.Join(w.srv.opts.StoreDir, "jetstream")
	if _, err := os.Stat(dir); err != nil {
		dir = w.srv.opts.StoreDir
	}
	f, err := os.CreateTemp(dir, ".space-probe-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, w.cfg.ProbeBytes))
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// restartJetStream stops JetStream, keeping its state on disk, and starts
// it again with the configuration the server started with, and the limits
// it was running with: limits left 0 would be sized anew from the space
// free now, which after a full disk can be less than the streams already
// hold, and refuse every write.
func (s *Server) restartJetStream() error {
	var maxMemory, maxStore int64
	if running := s.srv.JetStreamConfig(); running != nil {
		maxMemory, maxStore = running.MaxMemory, running.MaxStore
	}
	if err := s.srv.ShutdownJetStream(); err != nil {
		return fmt.Errorf("stopping JetStream: %w", err)
	}
	o := s.opts
	cfg := &server.JetStreamConfig{
		StoreDir:     filepath.Clean(o.StoreDir),
		SyncInterval: o.SyncInterval,
		SyncAlways:   o.SyncAlways,
		Strict:       !o.NoJetStreamStrict,
		MaxMemory:    cmp.Or(maxMemory, o.JetStreamMaxMemory),
		MaxStore:     cmp.Or(maxStore, o.JetStreamMaxStore),
		Domain:       o.JetStreamDomain,
		CompressOK:   true,
		UniqueTag:    o.JetStreamUniqueTag,
	}
	if err := s.srv.EnableJetStream(cfg); err != nil {
		return fmt.Errorf("starting JetStream: %w", err)
	}
	return nil
}
