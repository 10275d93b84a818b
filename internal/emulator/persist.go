package emulator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/internal/dirlock"
	"github.com/sluicehq/sluice/internal/retry"
)

// StateFile is the file, in Config.DataDir, that keeps the emulator's
// state.
const StateFile = "state.json"

// DefaultSaveDelay is the default of Config.SaveDelay.
const DefaultSaveDelay = time.Second

// persister keeps a Server's state in a file: the file's path and what
// changed since it was last written.
type persister struct {
	path string
	// changed holds a signal when a change is not saved yet.
	changed chan struct{}
	// changes counts the changes; saved is its value at the last save.
	changes atomic.Uint64
	mu      sync.Mutex // one save at a time; guards saved, lock and closed
	saved   uint64
	lock    *dirlock.Lock // of the directory, from New to Close
	closed  bool          // by Close: saves are refused
}

func newPersister(dir string) *persister {
	return &persister{path: filepath.Join(dir, StateFile), changed: make(chan struct{}, 1)}
}

// mutates reports whether an operation can change what the emulator
// keeps, so that the state is saved after it.
func mutates(op string) bool {
	switch op {
	case "CreateStream", "PutRecord", "PutRecords", "IncreaseStreamRetentionPeriod", "DecreaseStreamRetentionPeriod", // Kinesis; PutRecord is Firehose's too
		"CreateDeliveryStream", "PutRecordBatch",
		"CreateLogGroup", "PutRetentionPolicy", "CreateLogStream", "DeleteLogStream", "PutLogEvents":
		return true
	}
	return false
}

// markChanged notes a change of what the emulator keeps, for the saver:
// an atomic add and a send that never blocks.
func (s *Server) markChanged() {
	p := s.persist
	if p == nil {
		return
	}
	p.changes.Add(1)
	select {
	case p.changed <- struct{}{}:
	default: // a save is pending already
	}
}

// load reads the state file into s; a missing file is an empty state. Its
// errors name the file and say what to do.
func (s *Server) load() error {
	p := s.persist
	// Temporary files of saves a crash interrupted: the state file is
	// whole without them.
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(p.path), "."+StateFile+".*.tmp"))
	for _, name := range stale {
		if err := os.Remove(name); err != nil {
			s.log.Warn("emulator: removing the temporary file of an interrupted save", "file", name, "err", err)
		}
	}
	f, err := os.Open(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the emulator's state: %w (make the file readable by this user, or move it away to start the emulator empty)", err)
	}
	defer f.Close()
	var st state
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	if err := dec.Decode(&st); err != nil {
		return fmt.Errorf("the emulator's state file %s is corrupt (%w): move it away to start the emulator empty, or restore it from a backup", p.path, err)
	}
	if st.Version != stateVersion {
		return fmt.Errorf("the emulator's state file %s is of version %d, this sluice reads version %d: run the sluice that wrote it, or move it away to start the emulator empty", p.path, st.Version, stateVersion)
	}
	if err := s.restore(&st); err != nil {
		return fmt.Errorf("the emulator's state file %s is corrupt (%w): move it away to start the emulator empty, or restore it from a backup", p.path, err)
	}
	s.log.Info("emulator: state loaded", "file", p.path, "saved_at", st.SavedAt,
		"kinesis_streams", len(st.Kinesis), "firehose_delivery_streams", len(st.Firehose), "log_groups", len(st.Logs))
	return nil
}

// Save writes the emulator's state (its streams, delivery streams, log
// groups and the records they keep) to Config.DataDir now, if it changed
// since it was last saved. The file is replaced atomically and synced: a
// crash leaves the previous state or this one, whole. Serve saves by
// itself, after changes and when it stops; Save is for an emulator served
// through Handler. Without a DataDir, Save does nothing.
func (s *Server) Save() error {
	p := s.persist
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	changes := p.changes.Load()
	if changes == p.saved {
		return nil
	}
	if p.closed {
		return fmt.Errorf("saving the emulator's state: the emulator is closed and %s released, so the changes made since are not saved", filepath.Dir(p.path))
	}
	if err := writeStateFile(p.path, s.snapshot()); err != nil {
		return err
	}
	p.saved = changes
	return nil
}

// Close saves the state, if it changed, and releases Config.DataDir for
// another emulator or process to use. Serve closes the Server when it
// returns; Close is for an emulator served through Handler, or made and
// never served. After Close, Save refuses to save changes. Close can be
// called again; without a DataDir it does nothing.
func (s *Server) Close() error {
	p := s.persist
	if p == nil {
		return nil
	}
	err := s.Save()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.lock.Release()
	}
	return err
}

// writeStateFile writes st to path through a temporary file in the same
// directory, synced, then renamed over path, the directory synced after.
func writeStateFile(path string, st *state) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving the emulator's state: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+StateFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("saving the emulator's state: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := writeState(w, st); err != nil {
		return fmt.Errorf("saving the emulator's state to %s: %w", f.Name(), err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("saving the emulator's state to %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("saving the emulator's state to %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("saving the emulator's state to %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("saving the emulator's state: %w", err)
	}
	return syncDir(dir)
}

// syncDir syncs a directory, so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// saveRetry is how runSaver waits longer after each failed save: twice as
// long each time, up to a minute.
var saveRetry = retry.Policy{Max: time.Minute}

// runSaver saves the state after changes until ctx ends: Config.SaveDelay
// after the first change not saved, or four times as long as the last
// save took when that is longer, so that saving a large state takes at
// most a fifth of the time. A failed save is logged and tried again,
// waiting twice as long each time, up to a minute.
func (s *Server) runSaver(ctx context.Context) {
	p := s.persist
	delay := s.cfg.SaveDelay
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.changed:
		}
		if retry.Sleep(ctx, delay) != nil {
			return
		}
		start := time.Now()
		if err := s.Save(); err != nil {
			s.log.Error("emulator: saving the state failed; trying again", "file", p.path, "err", err)
			delay = saveRetry.Next(delay)
			select {
			case p.changed <- struct{}{}:
			default:
			}
			continue
		}
		delay = max(s.cfg.SaveDelay, 4*time.Since(start))
	}
}
