package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/emulator"
)

// emulatorCredential is the dummy access key and secret `sluice emulator`
// suggests: the emulator takes any.
const emulatorCredential = "emulator"

type emulatorFlags struct {
	listen           string
	accountID        string
	region           string
	autoCreate       bool
	seed             uint64
	faults           []string
	creates          []string
	maxStoredRecords int
	maxStoredBytes   int64
	shutdownTimeout  time.Duration
	dataDir          string
	log              logFlags
}

func newEmulatorCommand() *cobra.Command {
	var f emulatorFlags
	cmd := &cobra.Command{
		Use:   "emulator",
		Short: "Run an AWS emulator of Kinesis, Firehose and CloudWatch Logs with fault injection, for trying sluice and testing sinks",
		Long: `Run an in-memory AWS endpoint speaking the JSON 1.1 protocol of the Kinesis,
Firehose and CloudWatch Logs calls sluice makes, and STS's AssumeRole and
GetCallerIdentity (so that destinations with a role work), with fault
injection per stream, delivery stream, log group or role. Point an AWS SDK at it with the
environment it prints. It is for loopback: its admin API (/_emulator/) has no
authentication. docs/emulator.md describes the admin API and the faults.

A fault is SERVICE/RESOURCE:SETTING[,SETTING...], for example
  --fault kinesis/orders:throttle_records=0.3
  --fault 'logs//sluice/audit:server_errors=0.2,latency=300ms'
  --fault 'firehose/*:access_denied'
  --fault sts/sluice:external_id=ac_36Jc...   (role "sluice" requires that external id)
with settings throttle_records, fail_records, throttle_requests, server_errors
(fractions), latency (a duration), access_denied, not_found,
operations=OP+OP and, for sts, external_id=ID. In SLUICE_FAULT, separate faults with ';'.

--create makes a stream, delivery stream or log group at start, so that it can
be read (with the AWS CLI, sluice tail) before anything is put to it:
  --create kinesis/orders:shards=2
  --create firehose/events
  --create 'logs//sluice/audit:stream=app,stream=web'
One that exists already (kept by --data-dir) is kept as it is. In SLUICE_CREATE,
separate them with ';'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEmulator(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:4566", "HOST:PORT to serve on, a loopback address unless the network is trusted")
	fl.StringVar(&f.accountID, "account-id", emulator.DefaultAccountID, "account id of the ARNs the emulator returns")
	fl.StringVar(&f.region, "region", emulator.DefaultRegion, "region of the environment printed (requests' own ARNs carry the region they are signed for)")
	fl.BoolVar(&f.autoCreate, "auto-create", false, "create a stream, delivery stream or log group on the first put to it instead of answering ResourceNotFoundException")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the random choices of fault injection")
	fl.StringArrayVar(&f.faults, "fault", nil, "inject a fault, SERVICE/RESOURCE:SETTING[,SETTING...] (repeatable; see above)")
	fl.StringArrayVar(&f.creates, "create", nil, "create at start "+createForms+" (repeatable; see above)")
	fl.IntVar(&f.maxStoredRecords, "max-stored-records", emulator.DefaultMaxStoredRecords, "records kept per stream, delivery stream and log group, besides their retention; the oldest are dropped first")
	fl.Int64Var(&f.maxStoredBytes, "max-stored-bytes", 0, "bytes kept per stream, delivery stream and log group, besides their retention; the oldest records are dropped first (default: 67108864, 64 MiB, in memory; 8388608, 8 MiB, with --data-dir, so that a start reads it back within a second)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", emulator.DefaultShutdownTimeout, "how long to wait for calls in flight on SIGINT or SIGTERM")
	fl.StringVar(&f.dataDir, "data-dir", "", "keep the streams, delivery streams, log groups and their records across restarts in DIR/emulator, as serve --dev does in its --data-dir; one process at a time uses it, so not beside a serve --dev on the same DIR (default: in memory only)")
	f.log.register(fl)
	return cmd
}

// emulatorConfig makes the emulator's configuration from the flags.
func (f emulatorFlags) emulatorConfig() (emulator.Config, error) {
	cfg := emulator.Config{
		AccountID:        f.accountID,
		Region:           f.region,
		AutoCreate:       f.autoCreate,
		Seed:             f.seed,
		MaxStoredRecords: f.maxStoredRecords,
		MaxStoredBytes:   f.maxStoredBytes,
		ShutdownTimeout:  f.shutdownTimeout,
	}
	if f.dataDir != "" {
		cfg.DataDir = filepath.Join(f.dataDir, devAWSDir)
	}
	for _, value := range f.faults {
		for _, spec := range strings.Split(value, ";") {
			if spec = strings.TrimSpace(spec); spec == "" {
				continue
			}
			fault, err := emulator.ParseFault(spec)
			if err != nil {
				return cfg, fmt.Errorf("--fault: %w", err)
			}
			cfg.Faults = append(cfg.Faults, fault)
		}
	}
	return cfg, nil
}

func runEmulator(ctx context.Context, f emulatorFlags, stdout, stderr io.Writer) error {
	log, err := f.log.logger(stderr)
	if err != nil {
		return err
	}
	cfg, err := f.emulatorConfig()
	if err != nil {
		return err
	}
	creates, err := parseCreates(f.creates)
	if err != nil {
		return err
	}
	cfg.Logger = log
	srv, err := emulator.New(cfg)
	var inUse *emulator.DataDirInUseError
	if errors.As(err, &inUse) {
		return fmt.Errorf("--data-dir %s: %w", f.dataDir, err)
	}
	if err != nil {
		return err
	}
	for _, r := range creates {
		if err := r.create(srv, log); err != nil {
			return errors.Join(err, srv.Close())
		}
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", f.listen, err)
	}
	if addr, ok := ln.Addr().(*net.TCPAddr); ok && !addr.IP.IsLoopback() {
		log.Warn("the emulator serves beyond loopback: its admin API has no authentication", "listen", ln.Addr().String())
	}
	endpoint := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, `sluice emulator: Kinesis, Firehose and CloudWatch Logs at %[1]s
Point an AWS SDK or the AWS CLI at it with:
  export AWS_ENDPOINT_URL=%[1]s
  export AWS_REGION=%[2]s
  export AWS_ACCESS_KEY_ID=%[3]s
  export AWS_SECRET_ACCESS_KEY=%[3]s
Admin API: %[1]s%[4]s (faults, counters, records); see docs/emulator.md
`, endpoint, f.region, emulatorCredential, emulator.AdminPrefix)
	if cfg.DataDir != "" {
		fmt.Fprintf(stdout, "State: kept across restarts in %s\n", filepath.Join(cfg.DataDir, emulator.StateFile))
	}
	for _, fault := range cfg.Faults {
		log.Info("injecting a fault", "fault", fault.String())
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	log.Info("emulator stopped")
	return nil
}
