package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
)

func replayRow(v apiwire.Replay) []string {
	return []string{v.ID, v.CreatedAt, v.Since, v.Until, v.State}
}

func replayFields(v apiwire.Replay) []resourceField {
	return []resourceField{
		{"ID", v.ID}, {"URI", v.URI}, {"SUBSCRIPTION", v.SubscriptionID},
		{"SINCE", v.Since}, {"UNTIL", v.Until}, {"STATE", v.State}, {"CREATED_AT", v.CreatedAt},
	}
}

// replaysKind is the list of the replays of the subscription id, for
// runList.
func replaysKind(replays client.Replays, id string) resourceKind {
	return resourceKind{
		command: "replays",
		plural:  "replays of " + id,
		path:    replays.Path(),
		listKey: replays.ListKey(),
		columns: []string{"ID", "CREATED_AT", "SINCE", "UNTIL", "STATE"},
		row:     rowOf(replayRow),
	}
}

// replayTime reads a --since or --until: an RFC 3339 time, or a duration
// that far before now.
func replayTime(flag, value string, now time.Time) (string, error) {
	if t, err := time.Parse(time.RFC3339Nano, value); err == nil {
		return t.UTC().Format(time.RFC3339Nano), nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return "", fmt.Errorf("--%s %q is neither an RFC 3339 time (2026-11-23T04:00:00Z) nor a duration before now (90m, 2h)", flag, value)
	}
	return now.Add(-d).UTC().Format(time.RFC3339Nano), nil
}

// newReplayCommand returns `sluice subscriptions replay ID`.
func newReplayCommand(f *resourceFlags) *cobra.Command {
	var since, until string
	cmd := &cobra.Command{
		Use:   "replay ID",
		Short: "Deliver an event subscription's stored events again",
		Long: `Deliver the subscription's events stored from --since (to --until, default
now) again to each of its destinations, alongside live delivery:
POST /event_subscriptions/ID/replay. The replay runs in the background; see
its state with "subscriptions replays ID".

--since and --until take an RFC 3339 time or a duration before now (1h).
--since must be within the stream's retention (72 h by default).`,
		Example: `  sluice subscriptions replay esb_... --since 1h
  sluice subscriptions replay esb_... --since 2026-11-23T03:00:00Z --until 2026-11-23T04:00:00Z`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			now := time.Now()
			from, err := replayTime("since", since, now)
			if err != nil {
				return err
			}
			in := apiwire.ReplayInput{Since: &from}
			if until != "" {
				to, err := replayTime("until", until, now)
				if err != nil {
					return err
				}
				in.Until = &to
			}
			a, err := answerOf(func(opts ...client.CallOption) (apiwire.Replay, error) {
				return c.Replays(args[0]).Start(cmd.Context(), in, opts...)
			})
			if err != nil {
				return err
			}
			return a.print(cmd.OutOrStdout(), replayFields, f.json)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&since, "since", "", "deliver the events stored from this time (RFC 3339) or this long ago (1h)")
	fl.StringVar(&until, "until", "", "up to this time (RFC 3339) or this long ago (default: now)")
	_ = cmd.MarkFlagRequired("since")
	return cmd
}

// newReplaysCommand returns `sluice subscriptions replays ID [REPLAY_ID]`.
func newReplaysCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "replays ID [REPLAY_ID]",
		Short: "List an event subscription's replays, or show one, with their state",
		Long: `List the subscription's replays, newest first: GET
/event_subscriptions/ID/replays; with REPLAY_ID, show that one. A replay's
state is "running" until every destination has its events again, then
"done".`,
		Example: `  sluice subscriptions replays esb_...
  sluice subscriptions replays esb_... rpl_...`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			replays := c.Replays(args[0])
			if len(args) == 1 {
				return runList(cmd.Context(), c, replaysKind(replays, args[0]), listFlags{}, f.json, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			a, err := answerOf(func(opts ...client.CallOption) (apiwire.Replay, error) {
				return replays.Get(cmd.Context(), args[1], opts...)
			})
			if err != nil {
				return err
			}
			return a.print(cmd.OutOrStdout(), replayFields, f.json)
		},
	}
}
