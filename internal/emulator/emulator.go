package emulator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"time"
)

// Service is one of the emulated AWS services, named as in a SigV4
// credential scope.
type Service string

// The emulated services.
const (
	ServiceKinesis  Service = "kinesis"
	ServiceFirehose Service = "firehose"
	ServiceLogs     Service = "logs"
	// ServiceSTS is STS (AssumeRole, GetCallerIdentity), served in the
	// query protocol; its faults name a role by its name.
	ServiceSTS Service = "sts"
)

// Defaults of Config.
const (
	DefaultAccountID        = "123456789012"
	DefaultRegion           = "us-east-1"
	DefaultMaxStoredRecords = 100_000
	DefaultMaxStoredBytes   = 64 << 20
	// DefaultMaxStoredBytesDataDir is the default of MaxStoredBytes with
	// a DataDir, where a start reads back all that is kept.
	DefaultMaxStoredBytesDataDir = 8 << 20
	DefaultShutdownTimeout       = 5 * time.Second
)

// accountIDPattern is an AWS account id: twelve digits.
var accountIDPattern = regexp.MustCompile(`^\d{12}$`)

// Config configures a Server. The zero value is valid: see setDefaults.
type Config struct {
	// AccountID is the account of every ARN the emulator returns
	// (default 123456789012). The account in an ARN a request names is
	// not checked.
	AccountID string
	// Region is the region of the ARNs of resources created through the
	// Go API (default us-east-1); a request's own ARNs carry the region of
	// its credential scope.
	Region string
	// AutoCreate makes a put to a stream, delivery stream or log group (or
	// log stream) that does not exist create it instead of failing with
	// ResourceNotFoundException, so that any ARN works: for
	// `sluice serve --dev`. A Kinesis stream created so has one shard.
	AutoCreate bool
	// Seed seeds the random choices of fault injection: with the same seed,
	// the same sequence of calls to a resource meets the same faults.
	Seed uint64
	// MaxStoredRecords and MaxStoredBytes bound what each Kinesis stream,
	// Firehose delivery stream and CloudWatch log group keeps, besides
	// the retention of each (a stream's retention period, 24 hours unless
	// changed, a delivery stream's 24 hours, a log group's
	// retentionInDays): past either bound, its
	// oldest records are dropped, as if past their retention (a log
	// group's oldest by timestamp across its streams, once a
	// PutLogEvents call's events are stored); default 100,000 records,
	// and 64 MiB in memory or 8 MiB with a DataDir. A record counts its
	// data (and a Kinesis record its partition key, a log event its
	// message). With a DataDir, the default keeps a process with one of
	// each under 300 MB, and its restart under a second, however long
	// events flow (TestWeekAt100PerSecond); in memory, the larger one
	// keeps what tests count.
	MaxStoredRecords int
	MaxStoredBytes   int64
	// Faults are injected from the start, as by SetFault.
	Faults []Fault
	// ShutdownTimeout bounds how long Serve waits for calls in flight once
	// its context ends (default 5s).
	ShutdownTimeout time.Duration
	// Logger logs every call at debug level and faults at info; nil logs
	// nothing.
	Logger *slog.Logger
	// Now is the clock (default time.Now), for tests of the time checks of
	// PutLogEvents, of shard iterators' expiry and of retention.
	Now func() time.Time
	// DataDir, when set, keeps the streams, delivery streams and log
	// groups and the records they keep across restarts, in
	// DataDir/state.json (StateFile): New loads it, Serve saves it
	// SaveDelay after changes and when it stops (Save saves it at once).
	// One emulator per directory: New locks it (LockFile) until Close or
	// the end of Serve, and refuses a directory another process holds.
	// Empty (the default): memory only.
	DataDir string
	// SaveDelay is how long Serve waits after a change before saving the
	// state, so that a burst of calls makes one save (default 1s).
	SaveDelay time.Duration
}

func (c *Config) setDefaults() {
	if c.AccountID == "" {
		c.AccountID = DefaultAccountID
	}
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	if c.MaxStoredRecords == 0 {
		c.MaxStoredRecords = DefaultMaxStoredRecords
	}
	if c.MaxStoredBytes == 0 {
		c.MaxStoredBytes = DefaultMaxStoredBytes
		if c.DataDir != "" {
			c.MaxStoredBytes = DefaultMaxStoredBytesDataDir
		}
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.SaveDelay == 0 {
		c.SaveDelay = DefaultSaveDelay
	}
}

// Validate reports what is wrong with c, once defaults are set.
func (c *Config) Validate() error {
	if !accountIDPattern.MatchString(c.AccountID) {
		return fmt.Errorf("account id %q: want twelve digits", c.AccountID)
	}
	if c.MaxStoredRecords < 1 || c.MaxStoredBytes < 1 {
		return errors.New("MaxStoredRecords and MaxStoredBytes must be positive")
	}
	if c.SaveDelay < 0 {
		return errors.New("SaveDelay must not be negative")
	}
	for _, f := range c.Faults {
		if err := f.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Server is an emulator: the state of the three services, the faults to
// inject and the counters of calls. Its methods are safe for concurrent use.
type Server struct {
	cfg        Config
	log        *slog.Logger
	operations map[Service]map[string]operation
	faults     *faultSet
	counters   *counterSet
	kinesis    *kinesisStore
	firehose   *firehoseStore
	logs       *logsStore
	sts        *stsStore
	requestIDs requestIDs
	persist    *persister // nil without Config.DataDir
}

// New returns an emulator configured by cfg. It starts nothing: serve it
// with Serve, or mount Handler in a server of yours. With Config.DataDir,
// it locks the directory, refusing with a *DataDirInUseError one another
// emulator holds, loads the state saved there, and returns an error naming
// the file and what to do when the file cannot be read.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("emulator config: %w", err)
	}
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		faults:   newFaultSet(cfg.Seed),
		counters: newCounterSet(),
		kinesis:  newKinesisStore(),
		firehose: newFirehoseStore(),
		logs:     newLogsStore(),
		sts:      newSTSStore(),
	}
	s.operations = map[Service]map[string]operation{
		ServiceKinesis:  s.kinesisOperations(),
		ServiceFirehose: s.firehoseOperations(),
		ServiceLogs:     s.logsOperations(),
		ServiceSTS:      s.stsOperations(),
	}
	for _, f := range cfg.Faults {
		if err := s.faults.set(f); err != nil {
			return nil, err
		}
	}
	if cfg.DataDir != "" {
		lock, err := lockDir(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		s.persist = newPersister(cfg.DataDir)
		s.persist.lock = lock
		if err := s.load(); err != nil {
			lock.Release()
			return nil, err
		}
	}
	return s, nil
}

// Handler returns the emulator's HTTP handler: AWS calls on POST /, the
// admin API under /_emulator/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.registerAdmin(mux)
	mux.HandleFunc("POST /{$}", s.serveAWS)
	return mux
}

// Serve serves the emulator on ln until ctx ends, then stops accepting
// calls, waits up to Config.ShutdownTimeout for those in flight (injected
// latency ends at once), closes the connections still open and returns
// nil. It returns an error when serving
// fails. It closes ln. With Config.DataDir, it saves the state after
// changes while it serves, and when it stops it closes the Server (Close):
// a last save, and the directory released.
func (s *Server) Serve(ctx context.Context, ln net.Listener) (err error) {
	if s.persist != nil {
		saverCtx, stopSaver := context.WithCancel(ctx)
		saverDone := make(chan struct{})
		go func() {
			defer close(saverDone)
			s.runSaver(saverCtx)
		}()
		defer func() {
			stopSaver()
			<-saverDone
			if closeErr := s.Close(); closeErr != nil {
				err = errors.Join(err, closeErr)
			}
		}()
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		// Calls see ctx end, so that injected latency stops waiting.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving the emulator: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Connections still open: calls that did not finish in time, or
		// connections a client dialed and never used, which net/http takes
		// for idle only after 5 s. Nothing they hold needs keeping.
		err = srv.Close()
	}
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	if err != nil {
		return fmt.Errorf("shutting the emulator down: %w", err)
	}
	return nil
}

// now is the emulator's clock.
func (s *Server) now() time.Time { return s.cfg.Now() }
