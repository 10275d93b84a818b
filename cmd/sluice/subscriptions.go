package main

import (
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func subscriptionsKind() resourceKind {
	return resourceKind{
		command: "subscriptions",
		plural:  "event subscriptions",
		path:    "/event_subscriptions",
		listKey: "event_subscriptions",
		columns: []string{"ID", "CREATED_AT", "SOURCES", "DESTINATIONS", "DESCRIPTION"},
		view:    viewAs[subscriptionView],
	}
}

// newSubscriptionsCommand returns `sluice subscriptions`, a client of
// /event_subscriptions and of the sources of each.
func newSubscriptionsCommand() *cobra.Command {
	var f resourceFlags
	kind := subscriptionsKind()
	cmd := newResourceCommand(kind,
		"Create, list, change and delete event subscriptions through the API of a running sluice",
		`Manage the account's event subscriptions through the API of a running sluice
(/event_subscriptions): which event kinds (the sources) go to which event
destinations. A source of a traffic kind may have a CEL filter and keep only
some fields; "subscriptions sources" changes one source at a time.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		&f)
	cmd.AddCommand(newSubscriptionsCreateCommand(kind, &f), newSubscriptionsUpdateCommand(kind, &f), newSourcesCommand(kind, &f))
	cmd.AddCommand(newReplayCommand(kind, &f), newReplaysCommand(kind, &f))
	return cmd
}

// subscriptionFlags are the flags of subscriptions create and update.
type subscriptionFlags struct {
	body           bodyFlags
	described      describedFlags
	sources        []string
	destinationIDs []string
}

func (s *subscriptionFlags) register(fl *pflag.FlagSet) {
	s.body.register(fl)
	s.described.register(fl, limitInCharacters)
	fl.StringSliceVar(&s.sources, "source", nil, "route this event kind, such as http_request_complete.v0 (repeatable; replaces the sources of --data, and on update all the sources)")
	fl.StringSliceVar(&s.destinationIDs, "destination-id", nil, "send to this event destination (repeatable; on update, replaces the destinations)")
}

// build returns the body: --data, with the fields of the flags given set
// on it.
func (s *subscriptionFlags) build(fl *pflag.FlagSet, stdin io.Reader) (map[string]any, error) {
	body, err := s.body.read(stdin)
	if err != nil {
		return nil, err
	}
	s.described.apply(fl, body)
	if flagGiven(fl, "source") {
		sources := make([]any, len(s.sources))
		for i, kind := range s.sources {
			sources[i] = map[string]any{"type": kind}
		}
		body["sources"] = sources
	}
	if flagGiven(fl, "destination-id") {
		body["destination_ids"] = append([]string{}, s.destinationIDs...)
	}
	return body, nil
}

func newSubscriptionsCreateCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
	var s subscriptionFlags
	var quiet quietFlag
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an event subscription",
		Long: `Create an event subscription: POST /event_subscriptions.

--source routes an event kind, --destination-id names a destination; both
repeat. For a filter or fields on a source, give the sources in --data (see
EventSubscriptionCreate in docs/openapi.yaml), or add them afterwards with
"subscriptions sources add".`,
		Example: `  sluice subscriptions create --source http_request_complete.v0 --source api_key_created.v0 \
    --destination-id ed_... --description "requests and key changes"
  sluice subscriptions create --destination-id ed_... --data '{"sources": [
    {"type": "tcp_connection_closed.v0", "filter": "ev.conn.server_port == 443", "fields": ["conn.client_ip"]}]}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			body, err := s.build(cmd.Flags(), cmd.InOrStdin())
			if err != nil {
				return err
			}
			raw, err := sendBody(cmd.Context(), c, http.MethodPost, kind.path, body)
			if err != nil {
				return err
			}
			return printCreated(cmd.OutOrStdout(), kind.view, raw, f.json, quiet)
		},
	}
	s.register(cmd.Flags())
	quiet.register(cmd.Flags())
	return cmd
}

func newSubscriptionsUpdateCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
	var s subscriptionFlags
	cmd := &cobra.Command{
		Use:   "update ID",
		Short: "Change an event subscription: only the fields whose flags are given",
		Long: `Change an event subscription: PATCH /event_subscriptions/ID, with only the
fields whose flags are given (or that --data holds). --source and
--destination-id replace the whole list; to change one source, use
"subscriptions sources".`,
		Example: `  sluice subscriptions update esb_... --description "requests only" --source http_request_complete.v0`,
		Args:    cobra.ExactArgs(1),
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
				return nothingToUpdate("--description, --metadata, --source or --destination-id")
			}
			raw, err := sendBody(cmd.Context(), c, http.MethodPatch, kind.itemPath(args[0]), body)
			if err != nil {
				return err
			}
			return printResource(cmd.OutOrStdout(), kind.view, raw, f.json)
		},
	}
	s.register(cmd.Flags())
	return cmd
}

// subscriptionView is a subscription as the API returns it.
type subscriptionView struct {
	ID           string       `json:"id"`
	URI          string       `json:"uri"`
	CreatedAt    string       `json:"created_at"`
	Description  string       `json:"description"`
	Metadata     string       `json:"metadata"`
	Sources      []sourceView `json:"sources"`
	Destinations []struct {
		ID string `json:"id"`
	} `json:"destinations"`
}

func (s subscriptionView) sourceTypes() string {
	types := make([]string, len(s.Sources))
	for i, source := range s.Sources {
		types[i] = source.Type
	}
	return strings.Join(types, ",")
}

func (s subscriptionView) destinationIDs() string {
	ids := make([]string, len(s.Destinations))
	for i, d := range s.Destinations {
		ids[i] = d.ID
	}
	return strings.Join(ids, ",")
}

func (s subscriptionView) row() []string {
	return []string{s.ID, s.CreatedAt, s.sourceTypes(), s.destinationIDs(), s.Description}
}

// fields lists the subscription's fields, then a SOURCE line for each
// source, with its filter and fields, and a DESTINATION line for each
// destination.
func (s subscriptionView) fields() []resourceField {
	fields := []resourceField{
		{"ID", s.ID}, {"URI", s.URI}, {"CREATED_AT", s.CreatedAt},
		{"DESCRIPTION", s.Description}, {"METADATA", s.Metadata},
	}
	for _, source := range s.Sources {
		fields = append(fields, resourceField{"SOURCE", source.summary()})
	}
	for _, d := range s.Destinations {
		fields = append(fields, resourceField{"DESTINATION", d.ID})
	}
	return fields
}
