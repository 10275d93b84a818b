package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
)

// newDestinationsStatusCommand returns `sluice destinations status ID`.
func newDestinationsStatusCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status ID",
		Short: "Show how delivery to an event destination goes",
		Long: `Show the delivery status of an event destination: GET /event_destinations/ID/status.

The state is ok (the last write succeeded), retrying (writes fail, for less
than serve's --failing-after) or failing (calls fail as a whole for longer),
with the last success and error of every sluice process delivering it, the
events not yet delivered and the dead letters.`,
		Example: `  sluice destinations status ed_...`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			a, err := answerOf(func(opts ...client.CallOption) (apiwire.DestinationStatus, error) {
				return c.DestinationStatus(cmd.Context(), args[0], opts...)
			})
			if err != nil {
				return err
			}
			return a.print(cmd.OutOrStdout(), statusFields, f.json)
		},
	}
}

// newDestinationsTestCommand returns `sluice destinations test ID`.
func newDestinationsTestCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "test ID",
		Short: "Write one test event to an event destination now and show the outcome",
		Long: `Write one test event to an event destination now: POST /event_destinations/ID/test.

The event is an event_destination_updated.v0 envelope whose object is the
destination (its secret null), written once, without retries, within 10
seconds; CloudWatch Logs gets it in the log stream sluice-test. Use it to
check credentials and ARNs before subscribing. The command fails (exit
status 1) when the destination did not take the event.`,
		Example: `  sluice destinations test ed_...`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			a, err := answerOf(func(opts ...client.CallOption) (apiwire.DestinationTest, error) {
				return c.TestDestination(cmd.Context(), args[0], opts...)
			})
			if err != nil {
				return err
			}
			if err := a.print(cmd.OutOrStdout(), testFields, f.json); err != nil {
				return err
			}
			if a.err == nil && a.v.Result != "delivered" {
				return fmt.Errorf("the destination did not take the test event: %s", deref(a.v.Class))
			}
			return nil
		},
	}
}

// statusFields are the lines of a destination's delivery status.
func statusFields(v apiwire.DestinationStatus) []resourceField {
	fields := []resourceField{
		{"STATE", v.State},
		{"LAST_SUCCESS_AT", deref(v.LastSuccessAt)},
	}
	if e := v.LastError; e != nil {
		fields = append(fields,
			resourceField{"LAST_ERROR_AT", e.At},
			resourceField{"LAST_ERROR_CLASS", e.Class},
			resourceField{"LAST_ERROR_CODE", deref(e.Code)},
			resourceField{"LAST_ERROR_MESSAGE", e.Message},
		)
	} else {
		fields = append(fields, resourceField{"LAST_ERROR", ""})
	}
	return append(fields,
		resourceField{"EVENTS_PENDING", strconv.FormatUint(v.EventsPending, 10)},
		resourceField{"EVENTS_DEAD_LETTERED", strconv.FormatUint(v.EventsDeadLettered, 10)},
	)
}

// testFields are the lines of the outcome of a test write.
func testFields(v apiwire.DestinationTest) []resourceField {
	return []resourceField{
		{"RESULT", v.Result},
		{"CLASS", deref(v.Class)},
		{"CODE", deref(v.Code)},
		{"MESSAGE", deref(v.Message)},
		{"DURATION_MS", strconv.FormatInt(v.DurationMS, 10)},
	}
}

// deref returns *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
