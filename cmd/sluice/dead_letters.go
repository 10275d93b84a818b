package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
)

// redriveTimeout bounds a redrive request, which writes up to 10,000
// dead letters to the destination.
const redriveTimeout = 5 * time.Minute

// deadLettersKind is the list of the dead letters of the destination id,
// for runList.
func deadLettersKind(letters client.DeadLetters, id string) resourceKind {
	return resourceKind{
		command: "dead-letters",
		plural:  "dead letters of " + id,
		path:    letters.Path(),
		listKey: letters.ListKey(),
		columns: []string{"ID", "DEAD_LETTERED_AT", "EVENT_ID", "SUBSCRIPTION", "CLASS", "CODE", "ATTEMPTS", "MESSAGE"},
		row:     rowOf(deadLetterRow),
	}
}

func deadLetterRow(v apiwire.DeadLetter) []string {
	return []string{v.ID, v.DeadLetteredAt, v.EventID, v.SubscriptionID, v.Class, v.Code, strconv.FormatUint(v.Attempts, 10), v.Message}
}

// newDeadLettersCommand returns `sluice destinations dead-letters ID`.
func newDeadLettersCommand(f *resourceFlags) *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:   "dead-letters ID",
		Short: "List the dead letters of an event destination, newest first, with why",
		Long: `List the events the destination could never take, newest first, with why:
GET /event_destinations/ID/dead_letters, a page of --limit at a time.

--all follows next_page_uri to the last page; --json prints the API's answer,
each letter's stored event included. Send them again after a fix with
sluice destinations redrive ID.`,
		Example: `  sluice destinations dead-letters ed_... --all
  sluice destinations dead-letters ed_... --limit 10 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := l.validate(); err != nil {
				return err
			}
			return runList(cmd.Context(), c, deadLettersKind(c.DeadLetters(args[0]), args[0]), l, f.json, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&l.limit, "limit", 0, fmt.Sprintf("dead letters per page, from 1 to %d (default: the API's, %d)", maxListLimit, maxListLimit))
	fl.StringVar(&l.beforeID, "before-id", "", "list the dead letters older than this id (the last of the previous page)")
	fl.BoolVar(&l.all, "all", false, "list every page, following next_page_uri")
	return cmd
}

// newRedriveCommand returns `sluice destinations redrive ID`.
func newRedriveCommand(f *resourceFlags) *cobra.Command {
	var ids []string
	cmd := &cobra.Command{
		Use:   "redrive ID",
		Short: "Send the dead letters of an event destination again, after a fix",
		Long: `Send dead letters to the destination again, now:
POST /event_destinations/ID/dead_letters/redrive. Without --id, all of them
(at most 10,000 a call, oldest first); with --id, those.

Each goes as its subscription selects it today. Those the destination takes
are removed; those that fail again stay, and are printed with the reason.
When "remaining" is above "failed", run it again for the rest.`,
		Example: `  sluice destinations redrive ed_...
  sluice destinations redrive ed_... --id dl_1042 --id dl_1043`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr(), client.WithTimeout(max(client.DefaultTimeout, redriveTimeout)))
			if err != nil {
				return err
			}
			var in *apiwire.RedriveInput
			if len(ids) > 0 {
				in = &apiwire.RedriveInput{IDs: &ids}
			}
			a, err := answerOf(func(opts ...client.CallOption) (apiwire.Redrive, error) {
				return c.DeadLetters(args[0]).Redrive(cmd.Context(), in, opts...)
			})
			if err != nil {
				return err
			}
			if f.json {
				return writeRawJSON(cmd.OutOrStdout(), a.raw)
			}
			return printRedrive(cmd.OutOrStdout(), a)
		},
	}
	cmd.Flags().StringSliceVar(&ids, "id", nil, "a dead letter to send (dl_...); repeat or separate with commas; none: all")
	return cmd
}

// printRedrive prints the counts of a redrive, then its failures.
func printRedrive(w io.Writer, a answer[apiwire.Redrive]) error {
	if a.err != nil {
		return fmt.Errorf("the API's answer is not a redrive's: %w", a.err)
	}
	v := a.v
	err := printFields(w, []resourceField{
		{"REDRIVEN", strconv.Itoa(v.Redriven)}, {"FAILED", strconv.Itoa(v.Failed)}, {"REMAINING", strconv.Itoa(v.Remaining)},
	})
	if err != nil || len(v.Failures) == 0 {
		return err
	}
	rows := make([][]string, len(v.Failures))
	for i, f := range v.Failures {
		rows[i] = []string{f.ID, f.Class, f.Code, f.Message}
	}
	fmt.Fprintln(w)
	return printTable(w, []string{"ID", "CLASS", "CODE", "MESSAGE"}, rows)
}
