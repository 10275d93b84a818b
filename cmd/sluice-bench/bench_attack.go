package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/bytesize"
	"github.com/sluicehq/sluice/internal/loadgen"
	"github.com/sluicehq/sluice/internal/natsserver"
)

// defaultAttackMemoryLimit is the --memory-limit of the sluice serve the
// attack bench spawns: what a 512 MiB container would get.
const defaultAttackMemoryLimit = "460MiB"

func newBenchAttackCommand() *cobra.Command {
	var (
		cfg         loadgen.AttackConfig
		target      loadgen.AttackTarget
		spawn       attackSpawn
		asJSON      bool
		noGuarantee bool
		fresh       bool
	)
	cmd := &cobra.Command{
		Use:   "attack",
		Short: "Play issues 11's and 23's attacks from one account against a running sluice and measure what another account and the process go through",
		Long: `Play, from account B, each attack a hostile tenant can make with an
ordinary API key, while account A publishes ~1 KB events at --rate events per
second into a Kinesis destination of the AWS emulator of sluice serve --dev,
and measure per attack: what sluice answered B; A's ingest latency (p50, p99,
max) and status codes; A's delivery latency, from sending to the emulator's
arrival time, beside a baseline measured first with no attack; the peak
resident memory (VmHWM) and the CPU time of the process; and whether it
stayed up. At the end it waits up to --drain-timeout for every event A was
answered 202 for to be delivered.

The attacks, in the order played (--attacks picks some):
  leaks          GET /metrics on the API without a key; a management change
                 with Host: evil.example.com, and the audit event delivered;
                 A's destination's AWS secrets (replaced and current) in the
                 data dir's files
  bad-json       events with duplicate member names, "\ud800", 1e999
  forged-audit   B posts api_key_deleted.v0 and event_destination_deleted.v0
  dedup          B posts an event with an id A just used
  slowloris      --slow-uploads chunked uploads sending a byte every
                 --slow-every, for --slow-for
  big-bodies     --big-bodies concurrent bodies of 10 MiB of invalid events
  floods         up to --flood-count destinations, subscriptions, sources in
                 one subscription and API keys, then --replays replays at once
  filter-bombs   the replace and matches filters of issue 11 and events with
                 a 1 MB and a 50 KB server_name, left for --bomb-for
  fan-out        up to 50 destinations and 10 subscriptions naming them all,
                 each with a filter of 16 matches, --fan-out-events events
                 through them, the subscriptions deleted while delivered;
                 A's management reads measured before and during
  read-flood     --read-flood-concurrency list requests in flight (GET and
                 HEAD, filtered or not) for --read-flood-for, A's reads
                 measured before and during

By default it spawns the sluice serve to attack: sluice beside this binary
or in PATH (or --sluice-bin) with --dev, --memory-limit 460MiB, loopback ports, a temporary
data dir and, when serve has the flags, --metrics-http 127.0.0.1:0 and
--data-key-file with a random key kept outside the data dir; account A
is the bootstrap account, B is made through --nats-listen. Give --url (with
--token-a, --token-b, --emulator, and --pid, --data-dir, --metrics-url for
those figures) to attack a sluice you started instead; it must be on loopback.
With --fresh it spawns a new sluice for each attack, measured beside its own
baseline, so that what one attack leaves behind (memory, a backlog, ingest
slots still held) does not show in the next one's figures.

The command fails (exits non-zero) after printing the report when a
guarantee of issue 11 broke (the report's last lines list which), unless
--no-verdict.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			// printVerdict prints the report and fails the command when a
			// guarantee broke, unless --no-verdict.
			printVerdict := func(report loadgen.AttackReport) error {
				verdict := report.CheckGuarantees()
				if noGuarantee {
					verdict = nil
				}
				return printReport(cmd, report, asJSON, "bench attack", verdict)
			}
			if fresh {
				if target.URL != "" {
					return errors.New("--fresh spawns a sluice for each attack: drop --url")
				}
				report, err := attackEachFresh(ctx, cfg, spawn, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				return printVerdict(report)
			}
			if target.URL == "" {
				served, err := spawnAttackServe(ctx, spawn, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				defer served.stop()
				target = served.target
			} else if spawn.memoryLimit != "" {
				limit, err := bytesize.Parse(spawn.memoryLimit)
				if err != nil {
					return fmt.Errorf("--memory-limit %q: %w", spawn.memoryLimit, err)
				}
				target.MemoryLimit = limit
			}
			report, err := loadgen.RunAttacks(ctx, cfg, target, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return printVerdict(report)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&cfg.Attacks, "attacks", loadgen.AllAttacks(), "the attacks to play, comma-separated")
	fl.IntVar(&cfg.Rate, "rate", loadgen.DefaultAttackRate, "events per second account A publishes throughout")
	fl.IntVar(&cfg.Batch, "batch", loadgen.DefaultAttackBatch, "events per request of A")
	fl.DurationVar(&cfg.Baseline, "baseline", loadgen.DefaultAttackBaseline, "how long A is measured with no attack first")
	fl.DurationVar(&cfg.Settle, "settle", loadgen.DefaultAttackSettle, "how long A goes on being measured after each attack, as part of it")
	fl.IntVar(&cfg.SlowUploads, "slow-uploads", loadgen.DefaultAttackSlowUploads, "slow uploads of the slowloris attack")
	fl.DurationVar(&cfg.SlowFor, "slow-for", loadgen.DefaultAttackSlowFor, "how long the slow uploads go on")
	fl.DurationVar(&cfg.SlowEvery, "slow-every", loadgen.DefaultAttackSlowEvery, "how often a slow upload sends a byte")
	fl.IntVar(&cfg.BigBodies, "big-bodies", loadgen.DefaultAttackBigBodies, "concurrent big bodies")
	fl.IntVar(&cfg.BigBodyBytes, "big-body-bytes", loadgen.DefaultAttackBigBodyBytes, "bytes of each big body")
	fl.IntVar(&cfg.FloodCount, "flood-count", loadgen.DefaultAttackFloodCount, "most destinations, subscriptions, sources and API keys B tries to make, each")
	fl.IntVar(&cfg.Replays, "replays", loadgen.DefaultAttackReplays, "replays B starts at once")
	fl.IntVar(&cfg.FanOutEvents, "fan-out-events", loadgen.DefaultAttackFanOutEvents, "events B publishes through the routes of the fan-out attack")
	fl.IntVar(&cfg.ReadFloodConcurrency, "read-flood-concurrency", loadgen.DefaultAttackReadFloodConcurrency, "list requests B keeps in flight in the read flood")
	fl.DurationVar(&cfg.ReadFloodFor, "read-flood-for", loadgen.DefaultAttackReadFloodFor, "how long the read flood goes on, and A's reads are measured before it")
	fl.DurationVar(&cfg.BombFor, "bomb-for", loadgen.DefaultAttackBombFor, "how long the filter bombs are left in place")
	fl.DurationVar(&cfg.DrainTimeout, "drain-timeout", loadgen.DefaultAttackDrainTimeout, "how long to wait at the end for A's events to be delivered")
	fl.StringVar(&target.URL, "url", "", "the API of a running sluice to attack, on loopback (default: spawn one)")
	fl.StringVar(&target.TokenA, "token-a", "", "with --url: an API key of account A, the victim")
	fl.StringVar(&target.TokenB, "token-b", "", "with --url: an API key of account B, the attacker")
	fl.StringVar(&target.EmulatorURL, "emulator", "", "with --url: the AWS emulator of that sluice serve --dev")
	fl.StringVar(&target.MetricsURL, "metrics-url", "", "with --url: the listener of /metrics (--metrics-http), if apart from --url")
	fl.IntVar(&target.PID, "pid", 0, "with --url: the process id, for its memory and CPU time")
	fl.StringVar(&target.DataDir, "data-dir", "", "with --url: its data dir, searched for A's destination's secrets")
	fl.StringVar(&spawn.bin, "sluice-bin", "", "the sluice binary to spawn (default: sluice beside this binary, or in PATH)")
	fl.StringVar(&spawn.memoryLimit, "memory-limit", defaultAttackMemoryLimit, "--memory-limit of the sluice spawned (with --url: the one it was given, for the check of peak memory)")
	fl.StringSliceVar(&spawn.extraArgs, "serve-arg", nil, "a further argument of the sluice serve spawned (repeat it)")
	fl.StringVar(&spawn.logFile, "serve-log", "", "write the spawned sluice's log to this file")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fl.BoolVar(&noGuarantee, "no-verdict", false, "exit 0 even when a guarantee broke")
	fl.BoolVar(&fresh, "fresh", false, "spawn a new sluice for each attack, each with its own baseline, so that no attack's figures carry what an earlier one left behind")
	return cmd
}

// attackEachFresh plays each attack of cfg against a sluice spawned for it
// alone, and merges the reports.
func attackEachFresh(ctx context.Context, cfg loadgen.AttackConfig, spawn attackSpawn, progress io.Writer) (loadgen.AttackReport, error) {
	attacks := cfg.Attacks
	if len(attacks) == 0 {
		attacks = loadgen.AllAttacks()
	}
	var merged loadgen.AttackReport
	for _, name := range attacks {
		one := cfg
		one.Attacks = []string{name}
		report, err := attackSpawned(ctx, one, spawn, progress)
		if err != nil {
			return merged, fmt.Errorf("attack %s: %w", name, err)
		}
		merged.Merge(report)
	}
	return merged, nil
}

// attackSpawned spawns a sluice, plays cfg's attacks against it and stops
// it.
func attackSpawned(ctx context.Context, cfg loadgen.AttackConfig, spawn attackSpawn, progress io.Writer) (loadgen.AttackReport, error) {
	served, err := spawnAttackServe(ctx, spawn, progress)
	if err != nil {
		return loadgen.AttackReport{}, err
	}
	defer served.stop()
	return loadgen.RunAttacks(ctx, cfg, served.target, progress)
}

// attackSpawn says how to spawn the sluice serve to attack.
type attackSpawn struct {
	bin         string
	memoryLimit string
	extraArgs   []string
	logFile     string
	// maxEndpoints, when not 0, is the serve's --max-endpoints, where it
	// has the flag.
	maxEndpoints int
}

// attackServe is a spawned `sluice serve --dev` with accounts A and B.
type attackServe struct {
	cmd     *exec.Cmd
	target  loadgen.AttackTarget
	dataDir string
	keyDir  string // holds the data key, when serve encrypts its store
	exited  chan struct{}
	// accounts makes accounts in its store, through its NATS server.
	accounts accountMaker
	// edgeReady is closed when the process logged where its edge serves,
	// the attributes of that line then in edge.
	edgeReady chan struct{}

	mu   sync.Mutex
	edge map[string]string
	last []string // the last lines logged
	exit error    // how it exited, once exited is closed
	gone bool
}

// serveStartTimeout bounds the wait for the spawned serve to serve.
const serveStartTimeout = 60 * time.Second

// spawnAttackServe starts `sluice serve --dev` on loopback ports and a
// temporary data dir, with account A as its bootstrap account, and makes
// account B through its NATS server. stop ends it.
func spawnAttackServe(ctx context.Context, s attackSpawn, progress io.Writer) (_ *attackServe, err error) {
	bin := s.bin
	if bin == "" {
		if bin, err = findSluice(); err != nil {
			return nil, err
		}
	}
	limit, err := bytesize.Parse(s.memoryLimit)
	if err != nil {
		return nil, fmt.Errorf("--memory-limit %q: %w", s.memoryLimit, err)
	}
	dataDir, err := os.MkdirTemp("", "sluice-attack-")
	if err != nil {
		return nil, err
	}
	p := &attackServe{dataDir: dataDir, exited: make(chan struct{}), edgeReady: make(chan struct{})}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	tokenA := "sk_attack_a_" + randomToken()
	args := []string{"serve", "--dev", "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--dev-aws-listen", "127.0.0.1:0",
		"--log-format", "json", "--data-dir", dataDir, "--memory-limit", s.memoryLimit}
	if serveHasFlag(bin, "--metrics-http") {
		args = append(args, "--metrics-http", "127.0.0.1:0")
	}
	// A's records are followed as they arrive; a reader lagging behind
	// an attack must not find them dropped by the emulator's bound, whose
	// default with a data dir is 8 MiB. 64 MiB is what it kept before.
	if serveHasFlag(bin, "--dev-aws-max-stored-bytes") {
		args = append(args, "--dev-aws-max-stored-bytes", "64MiB")
	}
	if serveHasFlag(bin, "--edge-agents") {
		args = append(args, "--edge-agents", "127.0.0.1:0", "--edge-http", "127.0.0.1:0", "--edge-https", "127.0.0.1:0")
	}
	// Where serve can encrypt its store, it does, as an operator who
	// keeps AWS secrets would have it: the key sits outside the data dir.
	if serveHasFlag(bin, "--data-key-file") {
		if p.keyDir, err = os.MkdirTemp("", "sluice-attack-key-"); err != nil {
			return nil, err
		}
		keyFile := filepath.Join(p.keyDir, "data.key")
		if err := os.WriteFile(keyFile, []byte(randomToken()+randomToken()+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("writing the data key: %w", err)
		}
		args = append(args, "--data-key-file", keyFile)
	}
	if s.maxEndpoints > 0 && serveHasFlag(bin, "--max-endpoints") {
		args = append(args, "--max-endpoints", strconv.Itoa(s.maxEndpoints))
	}
	args = append(args, s.extraArgs...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(withoutSluiceEnv(os.Environ()), "SLUICE_BOOTSTRAP_API_KEY="+tokenA)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	var logFile *os.File
	if s.logFile != "" {
		if logFile, err = os.Create(s.logFile); err != nil {
			return nil, fmt.Errorf("--serve-log: %w", err)
		}
	}
	if err := cmd.Start(); err != nil {
		if logFile != nil {
			logFile.Close()
		}
		return nil, fmt.Errorf("starting %s serve: %w", bin, err)
	}
	p.cmd = cmd
	fmt.Fprintf(progress, "spawned %s %s (pid %d)\n", bin, strings.Join(args, " "), cmd.Process.Pid)
	served := make(chan map[string]string, 1)
	go p.readLog(stderr, logFile, served)
	var attrs map[string]string
	select {
	case attrs = <-served:
	case <-p.exited:
		return nil, fmt.Errorf("sluice serve exited before serving:\n%s", p.tail())
	case <-time.After(serveStartTimeout):
		return nil, fmt.Errorf("sluice serve did not serve within %s:\n%s", serveStartTimeout, p.tail())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var tokenB string
	// A serve that requires credentials of its NATS wrote sluice's seed
	// in its data dir; an older one took anyone.
	p.accounts = accountMaker{bin: bin, natsURL: attrs["nats_url"]}
	if seed := natsserver.SeedFile(dataDir, natsserver.IdentitySluice); seedExists(seed) {
		p.accounts.nkey = seed
	}
	if tokenB, err = p.accounts.create(ctx, "attacker"); err != nil {
		return nil, fmt.Errorf("making account B: %w", err)
	}
	p.target = loadgen.AttackTarget{
		URL: attrs["http"], TokenA: tokenA, TokenB: tokenB, EmulatorURL: attrs["aws_endpoint"], MetricsURL: attrs["metrics"],
		PID: cmd.Process.Pid, DataDir: dataDir, MemoryLimit: limit,
	}
	return p, nil
}

// readLog reads the process's log: it sends on served, once, the
// attributes of the lines that say where it serves, keeps the last lines,
// and copies every line to logFile when there is one.
func (p *attackServe) readLog(stderr io.Reader, logFile *os.File, served chan<- map[string]string) {
	defer close(p.exited)
	if logFile != nil {
		defer logFile.Close()
	}
	attrs := map[string]string{}
	sent, edgeSeen := false, false
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if logFile != nil {
			fmt.Fprintln(logFile, line)
		}
		p.mu.Lock()
		p.last = append(p.last, line)
		if len(p.last) > 40 {
			p.last = p.last[len(p.last)-40:]
		}
		p.mu.Unlock()
		if sent && edgeSeen {
			continue
		}
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == "the edge is serving" && !edgeSeen {
			edge := map[string]string{}
			for k, v := range rec {
				if s, ok := v.(string); ok {
					edge[k] = s
				}
			}
			p.mu.Lock()
			p.edge = edge
			p.mu.Unlock()
			close(p.edgeReady)
			edgeSeen = true
			continue
		}
		if sent {
			continue
		}
		for _, k := range []string{"nats_url", "aws_endpoint", "http", "metrics"} {
			if v, ok := rec[k].(string); ok && v != "" {
				attrs[k] = v
			}
		}
		if rec["msg"] == "sluice is serving" {
			served <- attrs
			sent = true
		}
	}
	err := p.cmd.Wait()
	p.mu.Lock()
	p.exit, p.gone = err, true
	p.mu.Unlock()
}

// edgeAttrs waits up to timeout for the line that says where the edge
// serves and returns its attributes (agents, http, https, agents_ca).
func (p *attackServe) edgeAttrs(timeout time.Duration) (map[string]string, error) {
	select {
	case <-p.edgeReady:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.edge, nil
	case <-p.exited:
		return nil, fmt.Errorf("sluice serve exited before its edge served:\n%s", p.tail())
	case <-time.After(timeout):
		return nil, fmt.Errorf("sluice serve logged no \"the edge is serving\" within %s (was it built with the edge?):\n%s", timeout, p.tail())
	}
}

// tail returns the last lines the process logged.
func (p *attackServe) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.last, "\n")
}

// stop ends the process, if it started, with SIGTERM and after 20 s
// SIGKILL, and removes its data dir and key.
func (p *attackServe) stop() {
	if p.cmd != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	_ = os.RemoveAll(p.dataDir)
	if p.keyDir != "" {
		_ = os.RemoveAll(p.keyDir)
	}
}

// serveHasFlag reports whether bin's serve command has the flag.
func serveHasFlag(bin, flag string) bool {
	out, err := exec.Command(bin, "serve", "--help").CombinedOutput()
	return err == nil && strings.Contains(string(out), flag+" ")
}

// withoutSluiceEnv returns env without the SLUICE_ variables, so that the
// spawned serve takes only the flags it is given.
func withoutSluiceEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SLUICE_") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			out = append(out, kv)
		}
	}
	return out
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// seedExists reports whether the seed file at path exists.
func seedExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// accountMaker makes accounts in a spawned serve's store through its own
// CLI, sluice accounts create, as an operator does.
type accountMaker struct {
	bin     string // the sluice binary
	natsURL string // the serve's --nats-listen
	nkey    string // the seed of sluice's NATS identity, when it requires one
}

// create makes an account named name with its first API key, and returns
// the key's token.
func (a accountMaker) create(ctx context.Context, name string) (string, error) {
	args := []string{"accounts", "create", "--name", name, "--description", "sluice-bench", "--nats-url", a.natsURL, "--json"}
	if a.nkey != "" {
		args = append(args, "--nats-nkey", a.nkey)
	}
	cmd := exec.CommandContext(ctx, a.bin, args...)
	cmd.Env = withoutSluiceEnv(os.Environ())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", a.bin, strings.Join(args[:2], " "), err, strings.TrimSpace(stderr.String()))
	}
	var created struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(out, &created); err != nil || created.Token == "" {
		return "", fmt.Errorf("%s accounts create printed %q, not an account with its token", a.bin, out)
	}
	return created.Token, nil
}

// findSluice returns the sluice binary to spawn when --sluice-bin gives
// none: sluice beside this binary (make bench builds both into bin/), or
// sluice in PATH.
func findSluice() (string, error) {
	return findBinary("sluice", "go build -o bin/ ./cmd/sluice ./cmd/sluice-bench", "--sluice-bin")
}

// findBinary returns the binary name beside this one or in PATH; build is
// how to build it and flag the flag that names it otherwise.
func findBinary(name, build, flag string) (string, error) {
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), name)
		if info, err := os.Stat(beside); err == nil && info.Mode().IsRegular() {
			return beside, nil
		}
	}
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("no %s binary beside this one or in PATH to spawn: build one (%s) and run bin/sluice-bench, or give it with %s", name, build, flag)
}
