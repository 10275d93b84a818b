package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
)

// newSourcesCommand returns `sluice subscriptions sources`, a client of
// /event_subscriptions/{id}/sources: a hook of subscriptionsFamily. It
// takes the persistent flags of `subscriptions`.
func newSourcesCommand(f *resourceFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sources",
		Short: "Add, list, change and remove the sources (event kinds) of an event subscription",
		Long: `Add, list, change and remove the sources of an event subscription, one at a
time (/event_subscriptions/ID/sources). A source is an event kind; a source of
a traffic kind (http_request_complete.v0, tcp_connection_closed.v0) may have a
CEL filter over the event, bound to ev, and keep only some fields.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newSourcesAddCommand(f),
		newSourcesListCommand(f),
		newSourcesGetCommand(f),
		newSourcesUpdateCommand(f),
		newSourcesDeleteCommand(f),
	)
	return cmd
}

// sources returns the sources of a subscription, added and changed with
// the bodies --data and the flags make.
func sources(c *client.Client, subscriptionID string) sourcesOf {
	return client.SourcesWithBodies[map[string]any, map[string]any](c.Sources(subscriptionID))
}

// sourceFlags are the flags of sources add and update that set fields.
func sourceFlags() []fieldFlag {
	return []fieldFlag{
		{flag: "filter", field: "filter", usage: `a CEL expression over the event, bound to ev: only the events for which it is true are delivered, such as "ev.conn.server_port == 443" (traffic kinds only)`},
		{flag: "field", field: "fields", list: true, usage: "deliver only this field, a dotted path such as conn.client_ip (repeatable; traffic kinds only; default: every field)"},
	}
}

func newSourcesAddCommand(f *resourceFlags) *cobra.Command {
	typeFlag := fieldFlag{flag: "type", field: "type", usage: "the event kind of the source, such as http_request_complete.v0 (required)"}
	return newSourceWriteCommand(f, append(sourceFlags(), typeFlag), &cobra.Command{
		Use:   "add SUBSCRIPTION_ID --type TYPE",
		Short: "Add a source to an event subscription",
		Long: `Add a source to an event subscription: POST /event_subscriptions/ID/sources.
A subscription has at most one source of each kind: change one with update.`,
		Example: `  sluice subscriptions sources add esb_... --type tcp_connection_closed.v0 \
    --filter 'ev.conn.server_port == 443' --field conn.client_ip --field conn.server_port`,
		Args: cobra.ExactArgs(1),
	}, func(ctx context.Context, s sourcesOf, args []string, body map[string]any, opts ...client.CallOption) (apiwire.Source, error) {
		if _, ok := body["type"]; !ok {
			return apiwire.Source{}, errors.New("--type is required: the event kind, such as http_request_complete.v0")
		}
		return s.Add(ctx, body, opts...)
	})
}

func newSourcesListCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list SUBSCRIPTION_ID",
		Short: "List the sources of an event subscription",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			a, err := answerOf(func(opts ...client.CallOption) (apiwire.SourceList, error) {
				return sources(c, args[0]).List(cmd.Context(), opts...)
			})
			switch {
			case err != nil:
				return err
			case f.json:
				return writeRawJSON(cmd.OutOrStdout(), a.raw)
			case a.err != nil:
				return fmt.Errorf("the API's answer is not a list of sources: %w", a.err)
			}
			rows := make([][]string, len(a.v.Sources))
			for i, source := range a.v.Sources {
				rows[i] = []string{source.Type, source.Filter, strings.Join(source.Fields, ",")}
			}
			return printTable(cmd.OutOrStdout(), []string{"TYPE", "FILTER", "FIELDS"}, rows)
		},
	}
}

func newSourcesGetCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "get SUBSCRIPTION_ID TYPE",
		Short: "Show a source of an event subscription",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			a, err := answerOf(func(opts ...client.CallOption) (apiwire.Source, error) {
				return sources(c, args[0]).Get(cmd.Context(), args[1], opts...)
			})
			if err != nil {
				return err
			}
			return a.print(cmd.OutOrStdout(), sourceFields, f.json)
		},
	}
}

func newSourcesUpdateCommand(f *resourceFlags) *cobra.Command {
	return newSourceWriteCommand(f, sourceFlags(), &cobra.Command{
		Use:   "update SUBSCRIPTION_ID TYPE",
		Short: "Change the filter or fields of a source: only those whose flags are given",
		Long: `Change the filter or fields of a source of a traffic kind:
PATCH /event_subscriptions/ID/sources/TYPE, with only the fields whose flags are
given (or that --data holds). --filter "" delivers every event again; --data
'{"fields": []}' every field.`,
		Example: `  sluice subscriptions sources update esb_... tcp_connection_closed.v0 --filter 'ev.conn.server_port != 22'`,
		Args:    cobra.ExactArgs(2),
	}, func(ctx context.Context, s sourcesOf, args []string, body map[string]any, opts ...client.CallOption) (apiwire.Source, error) {
		if len(body) == 0 {
			return apiwire.Source{}, nothingToUpdate("--filter or --field")
		}
		return s.Update(ctx, args[1], body, opts...)
	})
}

// sourcesOf are the sources of a subscription, added and changed with the
// bodies --data and the flags make.
type sourcesOf = client.Sources[map[string]any, map[string]any]

// newSourceWriteCommand returns cmd, sources add or update, whose flags
// are --data and flags, and which writes their body with write.
func newSourceWriteCommand(f *resourceFlags, flags []fieldFlag, cmd *cobra.Command,
	write func(ctx context.Context, s sourcesOf, args []string, body map[string]any, opts ...client.CallOption) (apiwire.Source, error)) *cobra.Command {
	b := &familyBody[apiwire.Source]{fields: newFieldFlags(flags, true)}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := f.client(cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		body, err := b.build(cmd.Flags(), cmd.InOrStdin(), nil)
		if err != nil {
			return err
		}
		a, err := answerOf(func(opts ...client.CallOption) (apiwire.Source, error) {
			return write(cmd.Context(), sources(c, args[0]), args, body, opts...)
		})
		if err != nil {
			return err
		}
		return a.print(cmd.OutOrStdout(), sourceFields, f.json)
	}
	b.register(cmd.Flags())
	return cmd
}

func newSourcesDeleteCommand(f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete SUBSCRIPTION_ID TYPE",
		Short: "Remove a source from an event subscription",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := sources(c, args[0]).Delete(cmd.Context(), args[1]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "deleted source %s of %s\n", args[1], args[0])
			return nil
		},
	}
}

func sourceFields(s apiwire.Source) []resourceField {
	return []resourceField{
		{"TYPE", s.Type}, {"URI", s.URI}, {"FILTER", s.Filter}, {"FIELDS", strings.Join(s.Fields, ",")},
	}
}

// sourceSummary is the source on one line: its type, and its filter and
// fields when set.
func sourceSummary(s apiwire.Source) string {
	parts := []string{s.Type}
	if s.Filter != "" {
		parts = append(parts, "filter: "+s.Filter)
	}
	if len(s.Fields) > 0 {
		parts = append(parts, "fields: "+strings.Join(s.Fields, ","))
	}
	return strings.Join(parts, "; ")
}
