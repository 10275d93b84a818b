package emulator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// findAWSCLIv2 returns the path of an AWS CLI of version 2 (`make awscli`
// installs Debian's), looking past a version 1 earlier in PATH.
func findAWSCLIv2() (string, error) {
	candidates := []string{}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		candidates = append(candidates, filepath.Join(dir, "aws"))
	}
	candidates = append(candidates, "/usr/bin/aws", "/usr/local/bin/aws")
	var seen []string
	for _, path := range candidates {
		if info, err := os.Stat(path); err != nil || info.IsDir() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
		cancel()
		version := strings.TrimSpace(string(out))
		if err == nil && strings.HasPrefix(version, "aws-cli/2.") {
			return path, nil
		}
		seen = append(seen, fmt.Sprintf("%s (%s)", path, strings.SplitN(version, " ", 2)[0]))
	}
	return "", fmt.Errorf("no AWS CLI v2 found (seen: %v): run `make awscli`, or apt-get install awscli", seen)
}

// awsCLIStep is one AWS CLI command of TestAWSCLI: its arguments after
// --endpoint-url and the checks of its JSON output.
type awsCLIStep struct {
	args  []string
	check func(t *testing.T, out map[string]any)
}

// operation is the AWS operation the step calls: "kinesis list-streams" is
// Kinesis' ListStreams.
func (s awsCLIStep) operation() (emulator.Service, string) {
	var name strings.Builder
	for _, word := range strings.Split(s.args[1], "-") {
		name.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return emulator.Service(s.args[0]), name.String()
}

// TestAWSCLI drives the emulator with the AWS CLI (v2), one command per
// operation it serves, as an analyst would: a client that is not the Go
// SDK reads and writes it like AWS. The commands of a phase run at once.
func TestAWSCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the AWS CLI")
	}
	cli, err := findAWSCLIv2()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; CI is set, and make test installs it (make awscli)", err)
		}
		t.Skipf("skipping the AWS CLI test: %v (in CI this test fails instead)", err)
	}
	emu := emulatortest.Start(t, emulator.Config{})
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"AWS_CONFIG_FILE=" + filepath.Join(home, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-credentials"),
		"AWS_ACCESS_KEY_ID=" + emulatortest.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + emulatortest.SecretAccessKey,
		"AWS_REGION=" + emu.Region,
		"AWS_DEFAULT_REGION=" + emu.Region,
		"AWS_ENDPOINT_URL=" + emu.Endpoint,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_MAX_ATTEMPTS=1",
		"AWS_PAGER=",
	}
	var (
		mu       sync.Mutex
		iterator string // of get-shard-iterator, for get-records
	)
	const (
		stream = "cli"
		group  = "/cli/group"
		role   = "arn:aws:iam::123456789012:role/cli"
	)
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	wantField := func(path ...string) func(t *testing.T, out map[string]any) {
		return func(t *testing.T, out map[string]any) {
			t.Helper()
			var v any = out
			for _, key := range path {
				m, ok := v.(map[string]any)
				if !ok {
					t.Fatalf("no %s in %v", strings.Join(path, "."), out)
				}
				v = m[key]
			}
			if v == nil {
				t.Fatalf("no %s in %v", strings.Join(path, "."), out)
			}
		}
	}
	wantCount := func(n int, path ...string) func(t *testing.T, out map[string]any) {
		return func(t *testing.T, out map[string]any) {
			t.Helper()
			var v any = out
			for _, key := range path {
				m, _ := v.(map[string]any)
				v = m[key]
			}
			if list, ok := v.([]any); !ok || len(list) != n {
				t.Fatalf("%s = %v, want %d members (answer %v)", strings.Join(path, "."), v, n, out)
			}
		}
	}
	phases := [][]awsCLIStep{
		{
			{args: []string{"kinesis", "create-stream", "--stream-name", stream, "--shard-count", "2"}},
			{args: []string{"firehose", "create-delivery-stream", "--delivery-stream-name", stream}, check: wantField("DeliveryStreamARN")},
			{args: []string{"logs", "create-log-group", "--log-group-name", group}},
			{args: []string{"sts", "get-caller-identity"}, check: func(t *testing.T, out map[string]any) {
				if out["Account"] != emulator.DefaultAccountID {
					t.Fatalf("Account = %v", out["Account"])
				}
			}},
			{args: []string{"sts", "assume-role", "--role-arn", role, "--role-session-name", "analyst", "--external-id", "ext-cli"}, check: func(t *testing.T, out map[string]any) {
				wantField("Credentials", "SessionToken")(t, out)
				if got := out["AssumedRoleUser"].(map[string]any)["Arn"]; got != "arn:aws:sts::123456789012:assumed-role/cli/analyst" {
					t.Fatalf("AssumedRoleUser.Arn = %v", got)
				}
			}},
		},
		{
			{args: []string{"kinesis", "create-stream", "--stream-name", stream + "-2", "--shard-count", "1"}},
			// Pages of one, which the CLI follows.
			{args: []string{"kinesis", "describe-stream", "--stream-name", stream, "--page-size", "1"}, check: func(t *testing.T, out map[string]any) {
				wantCount(2, "StreamDescription", "Shards")(t, out)
				if status := out["StreamDescription"].(map[string]any)["StreamStatus"]; status != "ACTIVE" {
					t.Fatalf("StreamStatus = %v", status)
				}
			}},
			{args: []string{"kinesis", "describe-stream-summary", "--stream-name", stream}, check: wantField("StreamDescriptionSummary", "OpenShardCount")},
			{args: []string{"kinesis", "list-shards", "--stream-name", stream}, check: wantCount(2, "Shards")},
			{args: []string{"kinesis", "put-record", "--stream-name", stream, "--partition-key", "k", "--data", "aGVsbG8="}, check: wantField("SequenceNumber")},
			{args: []string{"kinesis", "put-records", "--stream-name", stream, "--records", "Data=aGVsbG8=,PartitionKey=a", "Data=d29ybGQ=,PartitionKey=b"}, check: wantCount(2, "Records")},
			{args: []string{"firehose", "describe-delivery-stream", "--delivery-stream-name", stream}, check: wantField("DeliveryStreamDescription", "DeliveryStreamARN")},
			{args: []string{"firehose", "put-record", "--delivery-stream-name", stream, "--record", "Data=aGVsbG8K"}, check: wantField("RecordId")},
			{args: []string{"firehose", "put-record-batch", "--delivery-stream-name", stream, "--records", "Data=aGVsbG8K", "Data=d29ybGQK"}, check: wantCount(2, "RequestResponses")},
			{args: []string{"firehose", "list-delivery-streams"}, check: wantCount(1, "DeliveryStreamNames")},
			{args: []string{"logs", "put-retention-policy", "--log-group-name", group, "--retention-in-days", "7"}},
			{args: []string{"logs", "create-log-stream", "--log-group-name", group, "--log-stream-name", "s"}},
			{args: []string{"logs", "describe-log-groups", "--log-group-name-prefix", "/cli/"}, check: wantCount(1, "logGroups")},
		},
		{
			{args: []string{"kinesis", "list-streams", "--page-size", "1"}, check: wantCount(2, "StreamNames")},
			{args: []string{"kinesis", "increase-stream-retention-period", "--stream-name", stream + "-2", "--retention-period-hours", "48"}},
			{args: []string{"kinesis", "get-shard-iterator", "--stream-name", stream, "--shard-id", "shardId-000000000000", "--shard-iterator-type", "TRIM_HORIZON"}, check: func(t *testing.T, out map[string]any) {
				it, _ := out["ShardIterator"].(string)
				if it == "" {
					t.Fatalf("no ShardIterator in %v", out)
				}
				mu.Lock()
				iterator = it
				mu.Unlock()
			}},
			{args: []string{"logs", "put-log-events", "--log-group-name", group, "--log-stream-name", "s", "--log-events", "timestamp=" + now + ",message=hello from the cli"}, check: wantField("nextSequenceToken")},
			{args: []string{"logs", "describe-log-streams", "--log-group-name", group}, check: wantCount(1, "logStreams")},
		},
		{
			{args: []string{"kinesis", "get-records", "--shard-iterator", "ITERATOR"}, check: wantField("MillisBehindLatest")},
			{args: []string{"kinesis", "decrease-stream-retention-period", "--stream-name", stream + "-2", "--retention-period-hours", "24"}},
			{args: []string{"logs", "get-log-events", "--log-group-name", group, "--log-stream-name", "s", "--start-from-head"}, check: wantCount(1, "events")},
			{args: []string{"logs", "filter-log-events", "--log-group-name", group, "--filter-pattern", "hello"}, check: wantCount(1, "events")},
		},
		{
			{args: []string{"logs", "delete-log-stream", "--log-group-name", group, "--log-stream-name", "s"}},
		},
	}

	// Every operation the emulator serves has its command.
	covered := map[emulator.Service]map[string]bool{}
	commands := 0
	for _, phase := range phases {
		for _, step := range phase {
			commands++
			svc, op := step.operation()
			if covered[svc] == nil {
				covered[svc] = map[string]bool{}
			}
			covered[svc][op] = true
		}
	}
	for _, svc := range []emulator.Service{emulator.ServiceKinesis, emulator.ServiceFirehose, emulator.ServiceLogs, emulator.ServiceSTS} {
		for _, op := range emu.Operations(svc) {
			if !covered[svc][op] {
				t.Errorf("%s %s is served but has no AWS CLI command in this test", svc, op)
			}
		}
	}

	start := time.Now()
	for i, phase := range phases {
		var wg sync.WaitGroup
		for _, step := range phase {
			wg.Add(1)
			go func() {
				defer wg.Done()
				args := append([]string(nil), step.args...)
				mu.Lock()
				for j, a := range args {
					if a == "ITERATOR" {
						args[j] = iterator
					}
				}
				mu.Unlock()
				t.Run(strings.Join(step.args[:2], " "), func(t *testing.T) {
					out := runAWSCLI(t, cli, env, emu.Endpoint, args)
					if step.check != nil {
						step.check(t, out)
					}
				})
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.Fatalf("phase %d failed: not running the next", i+1)
		}
	}
	t.Logf("%d AWS CLI commands in %v", commands, time.Since(start).Round(time.Millisecond))

	if assumed := emu.AssumedRoles(); len(assumed) != 1 || assumed[0].ExternalID != "ext-cli" || assumed[0].RoleARN != role {
		t.Errorf("AssumedRoles = %+v", assumed)
	}
	if records, err := emu.KinesisRecords(stream); err != nil || len(records) != 3 {
		t.Errorf("the stream keeps %d records, want 3: %v", len(records), err)
	}
	if records, _, err := emu.FirehoseRecords(stream); err != nil || len(records) != 3 {
		t.Errorf("the delivery stream keeps %d records, want 3: %v", len(records), err)
	}
}

// runAWSCLI runs the AWS CLI with args against endpoint and decodes its
// JSON output (none is an empty map), failing the test when it fails.
func runAWSCLI(t *testing.T, cli string, env []string, endpoint string, args []string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	full := append(append([]string{}, args...), "--endpoint-url", endpoint, "--output", "json", "--no-cli-pager")
	cmd := exec.CommandContext(ctx, cli, full...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("aws %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	out := map[string]any{}
	if len(bytes.TrimSpace(stdout.Bytes())) > 0 {
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("aws %s printed no JSON object: %v\n%s", strings.Join(args, " "), err, stdout.String())
		}
	}
	return out
}
