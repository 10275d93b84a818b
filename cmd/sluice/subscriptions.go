package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/resource"
)

// subscriptionsFamily declares `sluice subscriptions`, a client of
// /event_subscriptions and of the sources of each (newSourcesCommand).
func subscriptionsFamily() family[apiwire.Subscription, apiwire.SubscriptionInput] {
	return family[apiwire.Subscription, apiwire.SubscriptionInput]{
		spec: resource.EventSubscriptions(),
		kind: resourceKind{
			command: "subscriptions",
			plural:  "event subscriptions",
			columns: []string{"ID", "CREATED_AT", "SOURCES", "DESTINATIONS", "DESCRIPTION"},
		},
		short: "Create, list, change and delete event subscriptions through the API of a running sluice",
		long: `Manage the account's event subscriptions through the API of a running sluice
(/event_subscriptions): which event kinds (the sources) go to which event
destinations. A source of a traffic kind may have a CEL filter and keep only
some fields; "subscriptions sources" changes one source at a time.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row:    subscriptionRow,
		fields: subscriptionFields,
		moreFlags: []fieldFlag{
			{flag: "source", field: "sources", list: true,
				usage: "route this event kind, such as http_request_complete.v0 (repeatable; replaces the sources of --data, and on update all the sources)",
				item:  func(kind string) any { return map[string]any{"type": kind} }},
			{flag: "destination-id", field: "destination_ids", list: true,
				usage: "send to this event destination (repeatable; on update, replaces the destinations)"}},
		create: verbHelp{
			short: "Create an event subscription",
			long: `Create an event subscription: POST /event_subscriptions.

--source routes an event kind, --destination-id names a destination; both
repeat. For a filter or fields on a source, give the sources in --data (see
EventSubscriptionCreate in docs/openapi.yaml), or add them afterwards with
"subscriptions sources add".`,
			example: `  sluice subscriptions create --source http_request_complete.v0 --source api_key_created.v0 \
    --destination-id ed_... --description "requests and key changes"
  sluice subscriptions create --destination-id ed_... --data '{"sources": [
    {"type": "tcp_connection_closed.v0", "filter": "ev.conn.server_port == 443", "fields": ["conn.client_ip"]}]}'`,
		},
		update: verbHelp{
			short: "Change an event subscription: only the fields whose flags are given",
			long: `Change an event subscription: PATCH /event_subscriptions/ID, with only the
fields whose flags are given (or that --data holds). --source and
--destination-id replace the whole list; to change one source, use
"subscriptions sources".`,
			example: `  sluice subscriptions update esb_... --description "requests only" --source http_request_complete.v0`,
		},
		updateFlags: "--description, --metadata, --source or --destination-id",
		commands: func(f *resourceFlags) []*cobra.Command {
			return []*cobra.Command{newSourcesCommand(f), newReplayCommand(f), newReplaysCommand(f)}
		},
	}
}

// subscriptionsKind is the collection of subscriptions, which tail reads
// too.
func subscriptionsKind() resourceKind {
	return resourceKind{
		command: "subscriptions",
		plural:  "event subscriptions",
		path:    apiwire.EventSubscriptionsPath,
		listKey: apiwire.EventSubscriptionsKey,
		columns: []string{"ID", "CREATED_AT", "SOURCES", "DESTINATIONS", "DESCRIPTION"},
	}
}

// newSubscriptionsCommand returns `sluice subscriptions`.
func newSubscriptionsCommand() *cobra.Command { return newFamilyCommand(subscriptionsFamily()) }

func subscriptionRow(s apiwire.Subscription) []string {
	types := make([]string, len(s.Sources))
	for i, source := range s.Sources {
		types[i] = source.Type
	}
	ids := make([]string, len(s.Destinations))
	for i, d := range s.Destinations {
		ids[i] = d.ID
	}
	return []string{s.ID, s.CreatedAt, strings.Join(types, ","), strings.Join(ids, ","), s.Description}
}

// subscriptionFields lists the subscription's fields, then a SOURCE line
// for each source, with its filter and fields, and a DESTINATION line for
// each destination.
func subscriptionFields(s apiwire.Subscription) []resourceField {
	fields := []resourceField{
		{"ID", s.ID}, {"URI", s.URI}, {"CREATED_AT", s.CreatedAt},
		{"DESCRIPTION", s.Description}, {"METADATA", s.Metadata},
	}
	for _, source := range s.Sources {
		fields = append(fields, resourceField{"SOURCE", sourceSummary(source)})
	}
	for _, d := range s.Destinations {
		fields = append(fields, resourceField{"DESTINATION", d.ID})
	}
	return fields
}
