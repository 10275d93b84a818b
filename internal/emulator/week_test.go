package emulator

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// weekEnv runs TestWeekAt100PerSecond, which takes minutes.
const weekEnv = "SLUICE_EMULATOR_WEEK"

// TestWeekAt100PerSecond puts a week of events at 100 a second, each of
// about 1 KB, into a Kinesis stream, a Firehose delivery stream and a log
// group without retention, as serve --dev does with one destination of
// each kind, with the clock moving a second for every 100 events and a
// save every simulated hour; then it starts another emulator on the
// saved state. It reports the memory, the size of state.json and the
// time and memory of the restart, and fails past 300 MB or 1 s. Run it
// with SLUICE_EMULATOR_WEEK=1 (SLUICE_EMULATOR_WEEK=2h for less than a
// week).
func TestWeekAt100PerSecond(t *testing.T) {
	setting := os.Getenv(weekEnv)
	if setting == "" {
		t.Skipf("a week of events takes minutes: run it with %s=1", weekEnv)
	}
	span := 7 * 24 * time.Hour
	if setting != "1" {
		var err error
		if span, err = time.ParseDuration(setting); err != nil {
			t.Fatalf("%s=%q: want 1 or a duration: %v", weekEnv, setting, err)
		}
	}
	const perSecond = 100
	dir := t.TempDir()
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	now := start
	cfg := Config{DataDir: dir, Now: func() time.Time { return now }}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateStream("events", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDeliveryStream("events"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLogGroup("/sluice/events", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLogStream("/sluice/events", "sluice"); err != nil {
		t.Fatal(err)
	}
	stream, shard := s.kinesis.streams["events"], s.kinesis.streams["events"].shards[0]
	deliveryStream := s.firehose.streams["events"]
	group := s.logs.groups["/sluice/events"]
	logStream := group.streams["sluice"]

	began := time.Now()
	var peakHeap uint64
	var memStats runtime.MemStats
	n := 0
	logEvents := make([]inputLogEvent, perSecond)
	for now.Before(start.Add(span)) {
		s.kinesis.mu.Lock()
		for i := range perSecond {
			s.kinesisPut(stream, shard, putRecordEntry{Data: weekEvent(n+i, now), PartitionKey: "ac_36Jc0d1kKq2Gx9Tq4v"}, now)
		}
		s.kinesis.mu.Unlock()
		s.firehose.mu.Lock()
		for i := range perSecond {
			s.firehosePut(deliveryStream, weekEvent(n+i, now), now)
		}
		s.firehose.mu.Unlock()
		for i := range logEvents {
			ts, message := now.UnixMilli(), string(weekEvent(n+i, now))
			logEvents[i] = inputLogEvent{Timestamp: &ts, Message: &message}
		}
		s.logs.mu.Lock()
		s.storeLogEvents(group, logStream, logEvents, now)
		s.logs.mu.Unlock()
		n += perSecond
		now = now.Add(time.Second)
		if now.Sub(start)%time.Hour == 0 {
			s.markChanged()
			if err := s.Save(); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&memStats)
			peakHeap = max(peakHeap, memStats.HeapAlloc)
		}
	}
	s.markChanged()
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	runtime.GC()
	runtime.ReadMemStats(&memStats)
	kept := fmt.Sprintf("Kinesis %d records (%d bytes), Firehose %d (%d), CloudWatch Logs %d (%d)",
		stream.storedRecords, stream.storedBytes, len(deliveryStream.records), deliveryStream.storedBytes, group.storedEvents, group.storedBytes)
	rss, peakRSS := procStatus(t, "VmRSS"), procStatus(t, "VmHWM")
	info, err := os.Stat(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s of events at %d/s: %d events to each service in %s; kept %s", span, perSecond, n, took.Round(time.Second), kept)
	t.Logf("after it: heap %s live (%s at most, sampled after each save), RSS %s (peak %s); state.json %s",
		megabytes(memStats.HeapAlloc), megabytes(peakHeap), megabytes(rss), megabytes(peakRSS), megabytes(uint64(info.Size())))

	s, stream, deliveryStream, group, logStream = nil, nil, nil, nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS(t)
	began = time.Now()
	restarted, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	restart := time.Since(began)
	runtime.ReadMemStats(&memStats)
	restartPeakRSS := procStatus(t, "VmHWM")
	if err := restarted.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart: %s, heap %s after it, peak RSS %s during it", restart.Round(time.Millisecond), megabytes(memStats.HeapAlloc), megabytes(restartPeakRSS))
	if peakRSS > 300<<20 || restartPeakRSS > 300<<20 {
		t.Errorf("peak RSS %s, %s at the restart: want under 300 MB", megabytes(peakRSS), megabytes(restartPeakRSS))
	}
	if restart > time.Second {
		t.Errorf("restart took %s, want under 1s", restart)
	}
}

// weekEvent returns the n-th event of TestWeekAt100PerSecond: about 1 KB
// of JSON, shaped as sluice's envelope, each in its own memory as a
// record decoded from a call is.
func weekEvent(n int, at time.Time) []byte {
	b := bytes.Clone(weekTemplate)
	copy(b[weekIDAt:weekIDAt+24], fmt.Appendf(nil, "%024d", n))
	copy(b[weekTimeAt:weekTimeAt+20], at.UTC().Format("2006-01-02T15:04:05Z"))
	return b
}

// weekTemplate is the event weekEvent fills in with an id (at weekIDAt) and
// a timestamp (at weekTimeAt).
var weekTemplate = fmt.Appendf(nil, `{"event_id":"ev_%024d","event_type":"http_request_complete.v0","account_id":"ac_36Jc0d1kKq2Gx9Tq4v","timestamp":"2006-01-02T15:04:05Z","object":{"conn":{"server_port":443,"client_ip":"203.0.113.7"},"method":"GET","path":"/api/v1/items/42","status":200,"latency_ms":12,"request_headers":{"user-agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36","accept":"application/json"},"tags":["edge","us"],"note":%q}}`,
	0, strings.Repeat("padding to a kilobyte ", 27))

var (
	weekIDAt   = bytes.Index(weekTemplate, []byte(`"ev_`)) + 4
	weekTimeAt = bytes.Index(weekTemplate, []byte(`"timestamp":"`)) + len(`"timestamp":"`)
)

// procStatus returns a size field of /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) uint64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("reading the RSS: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// resetPeakRSS resets the process's VmHWM to its RSS.
func resetPeakRSS(t *testing.T) {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("resetting the peak RSS: %v", err)
	}
}

func megabytes(n uint64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// TestDefaultMaxStoredBytes checks the byte bound's default: 64 MiB in
// memory, 8 MiB with a DataDir, the bound TestWeekAt100PerSecond measures.
func TestDefaultMaxStoredBytes(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want int64
	}{
		{Config{}, DefaultMaxStoredBytes},
		{Config{DataDir: t.TempDir()}, DefaultMaxStoredBytesDataDir},
		{Config{DataDir: t.TempDir(), MaxStoredBytes: 1 << 30}, 1 << 30},
	} {
		s, err := New(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.bounds().bytes; got != tt.want {
			t.Errorf("Config{DataDir: %q, MaxStoredBytes: %d}: a bound of %d bytes, want %d", tt.cfg.DataDir, tt.cfg.MaxStoredBytes, got, tt.want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
