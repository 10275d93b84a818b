package emulator_test

import (
	"context"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	"github.com/aws/aws-sdk-go-v2/service/firehose/types"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
)

// An emulator serving on a loopback port, a Firehose delivery stream that
// throttles half its records (the same ones with the same seed), and what
// it received. In a test, emulatortest.Start does the serving and makes the
// clients.
func Example() {
	srv, err := emulator.New(emulator.Config{
		Seed:   1,
		Faults: []emulator.Fault{{Service: emulator.ServiceFirehose, Resource: "events", ThrottleRecords: 0.5}},
	})
	if err != nil {
		panic(err)
	}
	if err := srv.CreateDeliveryStream("events"); err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() { stop(); <-served }()

	client := firehose.New(firehose.Options{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String("http://" + ln.Addr().String()),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "emulator", SecretAccessKey: "emulator"}, nil
		}),
		HTTPClient: emulatortest.LoopbackHTTPClient(),
		Retryer:    aws.NopRetryer{},
	})
	records := make([]types.Record, 10)
	for i := range records {
		records[i] = types.Record{Data: []byte(fmt.Sprintf("event %d\n", i))}
	}
	out, err := client.PutRecordBatch(ctx, &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String("events"), Records: records})
	if err != nil {
		panic(err)
	}
	stored, _, _ := srv.FirehoseRecords("events")
	counters := srv.Counters(emulator.ServiceFirehose, "events")
	fmt.Println("failed:", *out.FailedPutCount, "stored:", len(stored))
	fmt.Println("calls:", counters.Calls, "accepted:", counters.RecordsAccepted, "refused:", counters.RecordsFailed)
	// Output:
	// failed: 3 stored: 7
	// calls: 1 accepted: 7 refused: 3
}
