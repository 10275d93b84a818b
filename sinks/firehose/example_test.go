package firehose_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/firehose"
)

// A destination's sink, assuming the customer's role, writing one batch.
func ExampleNew() {
	ctx := context.Background()
	sink, err := firehose.New(ctx, firehose.Config{
		DeliveryStreamARN: "arn:aws:firehose:eu-west-1:123456789012:deliverystream/sluice-events",
		Auth:              sinks.AWSAuth{RoleARN: "arn:aws:iam::123456789012:role/sluice-delivery"},
		ExternalID:        "acc_2mE3example", // the sluice account the destination belongs to
	})
	if err != nil {
		fmt.Println(err) // a Config that cannot work: errors.Is(err, firehose.ErrConfig)
		return
	}
	results, err := sink.Write(ctx, []sinks.Record{
		{ID: "evt_2mE3", Data: []byte(`{"event_id":"evt_2mE3"}`), Timestamp: time.Now()},
	})
	var de *sinks.DestinationError
	switch {
	case errors.As(err, &de):
		fmt.Println("the destination failed:", de.Class, de.Code)
	case err != nil:
		fmt.Println("ended:", err)
	default:
		for i, r := range results {
			fmt.Println(i, r.Status, r.Code) // Retryable ones go again, alone
		}
	}
}
