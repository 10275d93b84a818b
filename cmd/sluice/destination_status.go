package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"
)

// newDestinationsStatusCommand returns `sluice destinations status ID`.
func newDestinationsStatusCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
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
			c, err := f.client()
			if err != nil {
				return err
			}
			raw, err := c.get(cmd.Context(), kind.itemPath(args[0])+"/status")
			if err != nil {
				return err
			}
			return printResource(cmd.OutOrStdout(), viewAs[statusView], raw, f.json)
		},
	}
}

// newDestinationsTestCommand returns `sluice destinations test ID`.
func newDestinationsTestCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
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
			c, err := f.client()
			if err != nil {
				return err
			}
			raw, err := c.send(cmd.Context(), http.MethodPost, kind.itemPath(args[0])+"/test", nil)
			if err != nil {
				return err
			}
			if err := printResource(cmd.OutOrStdout(), viewAs[trialView], raw, f.json); err != nil {
				return err
			}
			var res trialView
			if err := json.Unmarshal(raw, &res); err == nil && res.Result != "delivered" {
				return fmt.Errorf("the destination did not take the test event: %s", deref(res.Class))
			}
			return nil
		},
	}
}

// statusView is a destination's delivery status.
type statusView struct {
	State         string  `json:"state"`
	LastSuccessAt *string `json:"last_success_at"`
	LastError     *struct {
		Class   string  `json:"class"`
		Code    *string `json:"code"`
		Message string  `json:"message"`
		At      string  `json:"at"`
	} `json:"last_error"`
	EventsPending      uint64 `json:"events_pending"`
	EventsDeadLettered uint64 `json:"events_dead_lettered"`
}

func (v statusView) row() []string {
	return []string{v.State, deref(v.LastSuccessAt), strconv.FormatUint(v.EventsPending, 10), strconv.FormatUint(v.EventsDeadLettered, 10)}
}

func (v statusView) fields() []resourceField {
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

// trialView is the outcome of a test write.
type trialView struct {
	Result     string  `json:"result"`
	Class      *string `json:"class"`
	Code       *string `json:"code"`
	Message    *string `json:"message"`
	DurationMS int64   `json:"duration_ms"`
}

func (v trialView) row() []string {
	return []string{v.Result, deref(v.Class), deref(v.Code), deref(v.Message), strconv.FormatInt(v.DurationMS, 10)}
}

func (v trialView) fields() []resourceField {
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
