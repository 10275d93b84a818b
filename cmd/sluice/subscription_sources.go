package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newSourcesCommand returns `sluice subscriptions sources`, a client of
// /event_subscriptions/{id}/sources. It takes the persistent flags of
// `subscriptions`.
func newSourcesCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
	s := sourcesPaths{subscriptions: kind}
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
		newSourcesAddCommand(s, f),
		newSourcesListCommand(s, f),
		newSourcesGetCommand(s, f),
		newSourcesUpdateCommand(s, f),
		newSourcesDeleteCommand(s, f),
	)
	return cmd
}

// sourcesPaths makes the paths of the sources of a subscription.
type sourcesPaths struct {
	subscriptions resourceKind
}

func (s sourcesPaths) list(subscriptionID string) string {
	return s.subscriptions.itemPath(subscriptionID) + "/sources"
}

func (s sourcesPaths) item(subscriptionID, eventType string) string {
	return s.list(subscriptionID) + "/" + url.PathEscape(eventType)
}

// sourceFlags are the flags of sources add and update.
type sourceFlags struct {
	body      bodyFlags
	eventType string // add only
	filter    string
	fields    []string
}

func (s *sourceFlags) register(fl *pflag.FlagSet) {
	s.body.register(fl)
	fl.StringVar(&s.filter, "filter", "", `a CEL expression over the event, bound to ev: only the events for which it is true are delivered, such as "ev.conn.server_port == 443" (traffic kinds only)`)
	fl.StringSliceVar(&s.fields, "field", nil, "deliver only this field, a dotted path such as conn.client_ip (repeatable; traffic kinds only; default: every field)")
}

// build returns the body: --data, with the fields of the flags given set
// on it.
func (s *sourceFlags) build(fl *pflag.FlagSet, stdin io.Reader) (map[string]any, error) {
	body, err := s.body.read(stdin)
	if err != nil {
		return nil, err
	}
	if flagGiven(fl, "type") { // add only
		body["type"] = s.eventType
	}
	if flagGiven(fl, "filter") {
		body["filter"] = s.filter
	}
	if flagGiven(fl, "field") {
		body["fields"] = append([]string{}, s.fields...)
	}
	return body, nil
}

func newSourcesAddCommand(paths sourcesPaths, f *resourceFlags) *cobra.Command {
	var s sourceFlags
	cmd := &cobra.Command{
		Use:   "add SUBSCRIPTION_ID --type TYPE",
		Short: "Add a source to an event subscription",
		Long: `Add a source to an event subscription: POST /event_subscriptions/ID/sources.
A subscription has at most one source of each kind: change one with update.`,
		Example: `  sluice subscriptions sources add esb_... --type tcp_connection_closed.v0 \
    --filter 'ev.conn.server_port == 443' --field conn.client_ip --field conn.server_port`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			body, err := s.build(cmd.Flags(), cmd.InOrStdin())
			if err != nil {
				return err
			}
			if _, ok := body["type"]; !ok {
				return errors.New("--type is required: the event kind, such as http_request_complete.v0")
			}
			raw, err := sendBody(cmd.Context(), c, http.MethodPost, paths.list(args[0]), body)
			if err != nil {
				return err
			}
			return printResource(cmd.OutOrStdout(), viewAs[sourceView], raw, f.json)
		},
	}
	s.register(cmd.Flags())
	cmd.Flags().StringVar(&s.eventType, "type", "", "the event kind of the source, such as http_request_complete.v0 (required)")
	return cmd
}

func newSourcesListCommand(paths sourcesPaths, f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list SUBSCRIPTION_ID",
		Short: "List the sources of an event subscription",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			raw, err := c.get(cmd.Context(), paths.list(args[0]))
			if err != nil {
				return err
			}
			if f.json {
				return writeRawJSON(cmd.OutOrStdout(), raw)
			}
			var list struct {
				Sources []sourceView `json:"sources"`
			}
			if err := json.Unmarshal(raw, &list); err != nil {
				return fmt.Errorf("the API's answer is not a list of sources: %w", err)
			}
			rows := make([][]string, len(list.Sources))
			for i, source := range list.Sources {
				rows[i] = source.row()
			}
			return printTable(cmd.OutOrStdout(), []string{"TYPE", "FILTER", "FIELDS"}, rows)
		},
	}
}

func newSourcesGetCommand(paths sourcesPaths, f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "get SUBSCRIPTION_ID TYPE",
		Short: "Show a source of an event subscription",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			raw, err := c.get(cmd.Context(), paths.item(args[0], args[1]))
			if err != nil {
				return err
			}
			return printResource(cmd.OutOrStdout(), viewAs[sourceView], raw, f.json)
		},
	}
}

func newSourcesUpdateCommand(paths sourcesPaths, f *resourceFlags) *cobra.Command {
	var s sourceFlags
	cmd := &cobra.Command{
		Use:   "update SUBSCRIPTION_ID TYPE",
		Short: "Change the filter or fields of a source: only those whose flags are given",
		Long: `Change the filter or fields of a source of a traffic kind:
PATCH /event_subscriptions/ID/sources/TYPE, with only the fields whose flags are
given (or that --data holds). --filter "" delivers every event again; --data
'{"fields": []}' every field.`,
		Example: `  sluice subscriptions sources update esb_... tcp_connection_closed.v0 --filter 'ev.conn.server_port != 22'`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			body, err := s.build(cmd.Flags(), cmd.InOrStdin())
			if err != nil {
				return err
			}
			if len(body) == 0 {
				return nothingToUpdate("--filter or --field")
			}
			raw, err := sendBody(cmd.Context(), c, http.MethodPatch, paths.item(args[0], args[1]), body)
			if err != nil {
				return err
			}
			return printResource(cmd.OutOrStdout(), viewAs[sourceView], raw, f.json)
		},
	}
	s.register(cmd.Flags())
	return cmd
}

func newSourcesDeleteCommand(paths sourcesPaths, f *resourceFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete SUBSCRIPTION_ID TYPE",
		Short: "Remove a source from an event subscription",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := c.delete(cmd.Context(), paths.item(args[0], args[1])); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "deleted source %s of %s\n", args[1], args[0])
			return nil
		},
	}
}

// sourceView is a source as the API returns it.
type sourceView struct {
	Type   string   `json:"type"`
	URI    string   `json:"uri"`
	Filter string   `json:"filter"`
	Fields []string `json:"fields"`
}

func (s sourceView) row() []string {
	return []string{s.Type, s.Filter, strings.Join(s.Fields, ",")}
}

func (s sourceView) fields() []resourceField {
	return []resourceField{
		{"TYPE", s.Type}, {"URI", s.URI}, {"FILTER", s.Filter}, {"FIELDS", strings.Join(s.Fields, ",")},
	}
}

// summary is the source on one line: its type, and its filter and fields
// when set.
func (s sourceView) summary() string {
	parts := []string{s.Type}
	if s.Filter != "" {
		parts = append(parts, "filter: "+s.Filter)
	}
	if len(s.Fields) > 0 {
		parts = append(parts, "fields: "+strings.Join(s.Fields, ","))
	}
	return strings.Join(parts, "; ")
}
