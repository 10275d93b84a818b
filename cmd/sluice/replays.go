package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
)

func replayRow(v apiwire.Replay) []string {
	return []string{v.ID, v.CreatedAt, v.Since, v.Until, v.State, replayEvents(v)}
}

func replayFields(v apiwire.Replay) []resourceField {
	return []resourceField{
		{"ID", v.ID}, {"URI", v.URI}, {"SUBSCRIPTION", v.SubscriptionID},
		{"SINCE", v.Since}, {"UNTIL", v.Until}, {"STATE", v.State},
		{"EVENTS", replayEvents(v)}, {"CREATED_AT", v.CreatedAt},
	}
}

// replayEvents says how many of a replay's events are replayed: "1,234 of
// 5,000".
func replayEvents(v apiwire.Replay) string {
	return groupDigits(v.EventsReplayed) + " of " + groupDigits(v.EventsTotal)
}

// replaysKind is the list of the replays of the subscription id, for
// runList.
func replaysKind(replays client.Replays, id string) resourceKind {
	return resourceKind{
		command: "replays",
		plural:  "replays of " + id,
		path:    replays.Path(),
		listKey: replays.ListKey(),
		columns: []string{"ID", "CREATED_AT", "SINCE", "UNTIL", "STATE", "EVENTS"},
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
	var wait bool
	w := replayWait{poll: defaultReplayPoll}
	cmd := &cobra.Command{
		Use:   "replay ID",
		Short: "Deliver an event subscription's stored events again",
		Long: `Deliver the subscription's events stored from --since (to --until, default
now) again to each of its destinations, alongside live delivery:
POST /event_subscriptions/ID/replay. The replay runs in the background; see
its state and how many of its events are replayed with "subscriptions
replays ID", or give --wait.

--since and --until take an RFC 3339 time or a duration before now (1h).
--since must be within the stream's retention (72 h by default).

With --wait, the command reads the replay every --interval until it is
done, showing its progress on standard error ("replay rpl_...: 1,234 of
5,000 events (24%)", written over in place on a terminal, a line per change
elsewhere), then prints the replay as it ends. Events count once for each
destination. It fails, the replay going on, after --timeout, or when
interrupted (Ctrl-C).`,
		Example: `  sluice subscriptions replay esb_... --since 1h
  sluice subscriptions replay esb_... --since 1h --wait --timeout 30m
  sluice subscriptions replay esb_... --since 2026-11-23T03:00:00Z --until 2026-11-23T04:00:00Z`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !wait && (cmd.Flags().Changed("timeout") || cmd.Flags().Changed("interval")) {
				return errNoWaitFlags
			}
			if err := w.validate(); err != nil {
				return err
			}
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
			if wait && a.err == nil {
				a, err = waitReplay(cmd.Context(), c.Replays(args[0]), a, w, newProgressLine(cmd.ErrOrStderr()))
				if err != nil {
					return err
				}
			}
			return a.print(cmd.OutOrStdout(), replayFields, f.json)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&since, "since", "", "deliver the events stored from this time (RFC 3339) or this long ago (1h)")
	fl.StringVar(&until, "until", "", "up to this time (RFC 3339) or this long ago (default: now)")
	fl.BoolVar(&wait, "wait", false, "wait until the replay is done, showing its progress on standard error")
	fl.DurationVar(&w.timeout, "timeout", 0, "with --wait, fail if the replay is not done after this long (default: no limit)")
	fl.DurationVar(&w.poll, "interval", defaultReplayPoll, "with --wait, how often to read the replay")
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
