package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/smithy-go"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// startEmulatorCommand runs `sluice emulator` in process with args and
// returns the environment it printed; it stops when the test ends, and
// must then have returned nil.
func startEmulatorCommand(t *testing.T, args ...string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	out, printed := io.Pipe()
	root := newRootCommand()
	root.SetArgs(append([]string{"emulator", "--listen", "127.0.0.1:0", "--log-level", "error"}, args...))
	root.SetOut(printed)
	root.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		printed.CloseWithError(errors.New("sluice emulator returned"))
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("sluice emulator: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("sluice emulator did not stop within 30s of its context ending")
		}
	})
	env := map[string]string{}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if name, value, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(lines.Text()), "export "), "="); ok {
			env[name] = value
		}
		if strings.HasPrefix(lines.Text(), "Admin API:") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if env["AWS_ENDPOINT_URL"] == "" {
		t.Fatalf("sluice emulator printed no AWS_ENDPOINT_URL: %v (%v)", env, lines.Err())
	}
	return env
}

func firehoseClientOf(env map[string]string) *firehose.Client {
	return firehose.New(firehose.Options{
		Region:       env["AWS_REGION"],
		BaseEndpoint: aws.String(env["AWS_ENDPOINT_URL"]),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: env["AWS_ACCESS_KEY_ID"], SecretAccessKey: env["AWS_SECRET_ACCESS_KEY"]}, nil
		}),
		HTTPClient: emulatortest.LoopbackHTTPClient(),
		Retryer:    aws.NopRetryer{},
	})
}

func TestEmulatorCommand(t *testing.T) {
	t.Run("serves, with the faults of its flags", func(t *testing.T) {
		env := startEmulatorCommand(t, "--auto-create", "--region", "eu-west-3", "--fault", "firehose/denied:access_denied")
		if env["AWS_REGION"] != "eu-west-3" || env["AWS_ACCESS_KEY_ID"] == "" || env["AWS_SECRET_ACCESS_KEY"] == "" {
			t.Fatalf("printed environment %v", env)
		}
		client := firehoseClientOf(env)
		ctx := t.Context()
		put := func(name string) error {
			_, err := client.PutRecordBatch(ctx, &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String(name), Records: []types.Record{{Data: []byte("x\n")}}})
			return err
		}
		if err := put("anything"); err != nil {
			t.Fatalf("a put with --auto-create: %v", err)
		}
		var apiErr smithy.APIError
		if err := put("denied"); !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDeniedException" {
			t.Fatalf("a put to a denied delivery stream: %v", err)
		}
	})
	t.Run("faults from SLUICE_FAULT", func(t *testing.T) {
		t.Setenv("SLUICE_FAULT", "firehose/a:not_found; firehose/b:access_denied")
		env := startEmulatorCommand(t)
		client := firehoseClientOf(env)
		for name, want := range map[string]string{"a": "ResourceNotFoundException", "b": "AccessDeniedException"} {
			_, err := client.DescribeDeliveryStream(t.Context(), &firehose.DescribeDeliveryStreamInput{DeliveryStreamName: aws.String(name)})
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != want {
				t.Errorf("%s: %v, want %s", name, err, want)
			}
		}
	})
}

// TestEmulatorDataDirInUse checks that `sluice emulator --data-dir D`
// refuses a D another emulator uses, and so does `sluice serve --dev
// --data-dir D`, naming the directory and the process holding it: two
// processes never write one state file.
func TestEmulatorDataDirInUse(t *testing.T) {
	clearSluiceEnv(t)
	dataDir := t.TempDir()
	startEmulatorCommand(t, "--data-dir", dataDir)
	inUse := fmt.Sprintf("%s is in use by another emulator or sluice serve --dev (pid %d)", filepath.Join(dataDir, devAWSDir), os.Getpid())

	second := newRootCommand()
	second.SetArgs([]string{"emulator", "--listen", "127.0.0.1:0", "--data-dir", dataDir})
	second.SetOut(io.Discard)
	second.SetErr(io.Discard)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err := second.ExecuteContext(ctx)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "--data-dir "+dataDir) || !strings.Contains(err.Error(), inUse) {
		t.Fatalf("a second sluice emulator on --data-dir %s: %v, want it refused saying %q", dataDir, err, inUse)
	}

	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	serve := newRootCommand()
	serve.SetArgs([]string{"serve", "--dev", "--http", "127.0.0.1:0", "--metrics-http", "127.0.0.1:0", "--dev-aws-listen", "127.0.0.1:0", "--log-format", "json", "--data-dir", dataDir, "--edge-agents", "127.0.0.1:0", "--edge-http", "127.0.0.1:0", "--edge-https", "127.0.0.1:0"})
	serve.SetOut(io.Discard)
	serve.SetErr(io.Discard)
	err = serve.ExecuteContext(ctx)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), inUse) {
		t.Fatalf("sluice serve --dev beside sluice emulator on --data-dir %s: %v, want it refused saying %q", dataDir, err, inUse)
	}
}

func TestEmulatorFlags(t *testing.T) {
	tests := []struct {
		name    string
		faults  []string
		want    int
		wantErr bool
	}{
		{"none", nil, 0, false},
		{"two flags", []string{"kinesis/a:throttle_records=0.3", "logs//x/y:latency=1s"}, 2, false},
		{"two in one value", []string{"kinesis/a:not_found;firehose/*:server_errors=0.2;"}, 2, false},
		{"a bad one", []string{"kinesis/a:throttle_records=3"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := emulatorFlags{faults: tt.faults}.emulatorConfig()
			if tt.wantErr {
				if !errors.Is(err, emulator.ErrInvalidFault) {
					t.Fatalf("emulatorConfig = %v, want ErrInvalidFault", err)
				}
				return
			}
			if err != nil || len(cfg.Faults) != tt.want {
				t.Fatalf("emulatorConfig = %d faults, %v; want %d", len(cfg.Faults), err, tt.want)
			}
		})
	}
}
