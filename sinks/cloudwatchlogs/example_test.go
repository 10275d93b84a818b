package cloudwatchlogs_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/cloudwatchlogs"
)

// A destination's sink, with static keys, writing one subscription's batch
// into the log stream named after it.
func ExampleNew() {
	ctx := context.Background()
	group, err := cloudwatchlogs.New(ctx, cloudwatchlogs.Config{
		LogGroupARN: "arn:aws:logs:eu-west-1:123456789012:log-group:/sluice/events:*",
		Auth:        sinks.AWSAuth{AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "secret"},
	})
	if err != nil {
		fmt.Println(err) // a Config that cannot work: errors.Is(err, cloudwatchlogs.ErrConfig)
		return
	}
	sink := group.ForSubscription("esb_2mE3example") // the log stream esb_2mE3example
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
			fmt.Println(i, r.Status, r.Code) // LogEventTooOld and the like are Permanent
		}
	}
}
