package kinesis_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/internal/kinesalitetest"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/kinesis"
	"github.com/sluicehq/sluice/sinks/sinktest"
)

// TestConformance runs the sink conformance suite against kinesalite, one
// new stream of two shards per subtest.
func TestConformance(t *testing.T) {
	srv := kinesalitetest.Start(t)
	var streams atomic.Int64
	client := kinesalitetest.LoopbackHTTPClient()
	sinktest.Run(t, func(t *testing.T) sinktest.Destination {
		arn := srv.CreateStream(t, fmt.Sprintf("conformance-%d", streams.Add(1)), 2)
		sink, err := kinesis.New(context.Background(), kinesis.Config{
			StreamARN:  arn,
			Auth:       sinks.AWSAuth{AccessKeyID: kinesalitetest.AccessKeyID, SecretAccessKey: kinesalitetest.SecretAccessKey},
			Endpoint:   srv.Endpoint,
			HTTPClient: client,
		})
		if err != nil {
			t.Fatalf("kinesis.New: %v", err)
		}
		return sinktest.Destination{
			Sink:    sink,
			ReadAll: func(t *testing.T) []sinks.Record { return readAll(t, srv, arn) },
		}
	})
}

// readAll returns the records of a kinesalite stream as sinks.Records, the
// partition key as ID.
func readAll(t *testing.T, srv *kinesalitetest.Server, arn string) []sinks.Record {
	t.Helper()
	var records []sinks.Record
	for _, r := range srv.ReadAll(t, arn) {
		records = append(records, sinks.Record{ID: r.PartitionKey, Data: r.Data})
	}
	return records
}

// TestEndpointFromEnvironment checks that the SDK's standard variables point
// the sink at an emulator with no sluice setting.
func TestEndpointFromEnvironment(t *testing.T) {
	srv := kinesalitetest.Start(t)
	for i, variable := range []string{"AWS_ENDPOINT_URL_KINESIS", "AWS_ENDPOINT_URL"} {
		t.Run(variable, func(t *testing.T) {
			for _, v := range []string{"AWS_ENDPOINT_URL_KINESIS", "AWS_ENDPOINT_URL"} {
				t.Setenv(v, "")
			}
			t.Setenv(variable, srv.Endpoint)
			t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
			arn := srv.CreateStream(t, fmt.Sprintf("from-env-%d", i), 1)
			sink, err := kinesis.New(context.Background(), kinesis.Config{
				StreamARN:  arn,
				Auth:       sinks.AWSAuth{AccessKeyID: kinesalitetest.AccessKeyID, SecretAccessKey: kinesalitetest.SecretAccessKey},
				HTTPClient: kinesalitetest.LoopbackHTTPClient(),
			})
			if err != nil {
				t.Fatal(err)
			}
			batch := []sinks.Record{{ID: "env-0", Data: []byte(`{"via":"` + variable + `"}`)}}
			results, err := sink.Write(context.Background(), batch)
			if err != nil || results[0].Status != sinks.Accepted {
				t.Fatalf("Write = %v, %v", results, err)
			}
			got := readAll(t, srv, arn)
			if len(got) != 1 || got[0].ID != "env-0" || string(got[0].Data) != string(batch[0].Data) {
				t.Fatalf("read back %+v", got)
			}
		})
	}
}

// TestMissingStream checks the class of a write to a stream that does not
// exist, as kinesalite answers it.
func TestMissingStream(t *testing.T) {
	srv := kinesalitetest.Start(t)
	sink, err := kinesis.New(context.Background(), kinesis.Config{
		StreamARN:  kinesalitetest.StreamARN("never-created"),
		Auth:       sinks.AWSAuth{AccessKeyID: kinesalitetest.AccessKeyID, SecretAccessKey: kinesalitetest.SecretAccessKey},
		Endpoint:   srv.Endpoint,
		HTTPClient: kinesalitetest.LoopbackHTTPClient(),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sink.Write(context.Background(), []sinks.Record{{ID: "x", Data: []byte(`{}`)}})
	var de *sinks.DestinationError
	if !errors.As(err, &de) || de.Class != sinks.ClassNotFound || de.Code != "ResourceNotFoundException" {
		t.Fatalf("Write = %v, want a not_found DestinationError", err)
	}
}
