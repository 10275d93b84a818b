package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
)

// deleteDeadLettersFlags are the flags of `sluice destinations
// delete-dead-letters`: the letters to delete.
type deleteDeadLettersFlags struct {
	ids                            []string
	subscriptionID, class, eventID string
	all                            bool
}

// validate says what is wrong with a combination of the flags.
func (f deleteDeadLettersFlags) validate() error {
	filtered := f.subscriptionID != "" || f.class != "" || f.eventID != ""
	switch {
	case len(f.ids) > 0 && (filtered || f.all):
		return errors.New("--id names letters; --subscription-id, --class, --event-id and --all pick them: give one or the other")
	case f.all && filtered:
		return errors.New("--all deletes every dead letter of the destination; leave it out to delete only those --subscription-id, --class or --event-id pick")
	case len(f.ids) == 0 && !filtered && !f.all:
		return errors.New("name the dead letters to delete: --id dl_..., a filter (--subscription-id, --class, --event-id), or --all for every one")
	}
	return nil
}

// filter returns the body of a bulk delete of the letters the flags pick.
func (f deleteDeadLettersFlags) filter() apiwire.DeadLetterFilter {
	var in apiwire.DeadLetterFilter
	for _, field := range []struct {
		value string
		into  **string
	}{{f.subscriptionID, &in.SubscriptionID}, {f.class, &in.Class}, {f.eventID, &in.EventID}} {
		if field.value != "" {
			*field.into = &field.value
		}
	}
	return in
}

// newDeleteDeadLettersCommand returns `sluice destinations
// delete-dead-letters ID`.
func newDeleteDeadLettersCommand(f *resourceFlags) *cobra.Command {
	var d deleteDeadLettersFlags
	cmd := &cobra.Command{
		Use:   "delete-dead-letters ID",
		Short: "Discard dead letters of an event destination, by id or by a filter",
		Long: `Discard dead letters of the destination for good, without sending them.

With --id, those letters, one DELETE /event_destinations/ID/dead_letters/DL_ID
each. With --subscription-id, --class or --event-id, every letter all of them
match, and with --all every letter: POST /event_destinations/ID/dead_letters/delete,
called again with its next_after_id until it has examined them all (10,000 a
call). Prints DELETED, and REMAINING for a filter or --all.

A deleted letter no longer counts in the destination's events_dead_lettered,
and its event may be dead-lettered again if it fails again.`,
		Example: `  sluice destinations delete-dead-letters ed_... --id dl_1042 --id dl_1043
  sluice destinations delete-dead-letters ed_... --class too_large
  sluice destinations delete-dead-letters ed_... --subscription-id esb_... --class permanent
  sluice destinations delete-dead-letters ed_... --all`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := d.validate(); err != nil {
				return err
			}
			c, err := f.client(cmd.ErrOrStderr(), client.WithTimeout(max(client.DefaultTimeout, redriveTimeout)))
			if err != nil {
				return err
			}
			letters := c.DeadLetters(args[0])
			if len(d.ids) > 0 {
				n, err := deleteDeadLetterIDs(cmd.Context(), letters, d.ids)
				if err != nil {
					return err
				}
				return printDeletion(cmd.OutOrStdout(), f.json, apiwire.DeadLetterDeletion{Deleted: n}, false)
			}
			total, err := deleteDeadLettersMatching(cmd.Context(), letters, d.filter())
			if err != nil {
				return err
			}
			return printDeletion(cmd.OutOrStdout(), f.json, total, true)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&d.ids, "id", nil, "a dead letter to delete (dl_...); repeat or separate with commas")
	fl.StringVar(&d.subscriptionID, "subscription-id", "", "delete the letters of this subscription (esb_...)")
	fl.StringVar(&d.class, "class", "", "delete the letters of this class: too_large, permanent, filter or malformed")
	fl.StringVar(&d.eventID, "event-id", "", "delete the letters of this event (ev_...)")
	fl.BoolVar(&d.all, "all", false, "delete every dead letter of the destination")
	return cmd
}

// deleteDeadLetterIDs deletes the letters ids one by one, and returns how
// many it deleted; it stops at the first that fails.
func deleteDeadLetterIDs(ctx context.Context, letters client.DeadLetters, ids []string) (int, error) {
	for i, id := range ids {
		if err := letters.Delete(ctx, id); err != nil {
			return i, fmt.Errorf("deleting dead letter %s (%d of %d deleted before it): %w", id, i, len(ids), err)
		}
	}
	return len(ids), nil
}

// deleteDeadLettersMatching deletes the letters in picks, a call at a
// time until the API has examined them all, and returns the totals.
func deleteDeadLettersMatching(ctx context.Context, letters client.DeadLetters, in apiwire.DeadLetterFilter) (apiwire.DeadLetterDeletion, error) {
	var total apiwire.DeadLetterDeletion
	for {
		out, err := letters.DeleteMatching(ctx, in)
		if err != nil {
			return total, fmt.Errorf("deleting dead letters (%d deleted before): %w", total.Deleted, err)
		}
		total.Deleted += out.Deleted
		total.Remaining = out.Remaining
		if out.NextAfterID == nil {
			return total, nil
		}
		in.AfterID = out.NextAfterID
	}
}

// printDeletion prints what a delete of dead letters did, as the API's
// answer with --json.
func printDeletion(w io.Writer, asJSON bool, d apiwire.DeadLetterDeletion, remaining bool) error {
	if asJSON {
		if !remaining {
			return writeJSONValue(w, struct {
				Deleted int `json:"deleted"`
			}{d.Deleted})
		}
		return writeJSONValue(w, d)
	}
	fields := []resourceField{{"DELETED", strconv.Itoa(d.Deleted)}}
	if remaining {
		fields = append(fields, resourceField{"REMAINING", strconv.Itoa(d.Remaining)})
	}
	return printFields(w, fields)
}
