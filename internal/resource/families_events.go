package resource

import (
	"reflect"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/schemas"
)

// EventDestinations is the family of event destinations,
// /event_destinations. The secret of a target's access key is write-only.
func EventDestinations() Spec {
	return Spec{
		Prefix: schemas.PrefixDestination, Path: apiwire.EventDestinationsPath, ListKey: apiwire.EventDestinationsKey,
		Fields: append(described(Bytes),
			Field{Name: "format", Kind: String, Create: true, Update: true,
				Usage: `how events are serialized: "json", the only format (default json)`},
			// The CLI sets a target with the flags of its type. The secret
			// of its access key is never returned.
			Field{Name: "target", Kind: Object, Required: true, Create: true, Update: true}),
		Doc: Doc{
			Stem: "EventDestination", Plural: "EventDestinations", Tag: "event_destinations",
			Item: "destination", Items: "destinations",
			IDSchema: "DestinationID",
			Create: &Op{Summary: "Create an event destination.",
				Description: "ARNs are parsed and checked (service, region, account, resource): a malformed\n" +
					"one is 400.\n",
				Answer: Answer{Description: "The destination was created.", Schema: "EventDestination"}},
			List: &Op{Summary: "List event destinations, newest first.",
				Answer: Answer{Description: "A page of destinations."}},
			Get: &Op{Summary: "Get an event destination."},
			Update: &Op{Summary: "Update an event destination.",
				Description: "Changes the fields sent and keeps the others. A `target`, when sent, replaces the\n" +
					"whole target, credentials included; its type (firehose, kinesis,\n" +
					"cloudwatch_logs) cannot change: another type is 400.\n"},
			Delete: &Op{Summary: "Delete an event destination.",
				Description: "A destination that a subscription still sends to cannot be deleted: 409, whose\n" +
					"message names the subscriptions. Remove it from them first.\n",
				Errors: []int{409}},
			// The target's schemas, Target and TargetInput, are the
			// source's: one of a type each, which no Go type says.
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.Destination](), Input: reflect.TypeFor[apiwire.DestinationInput](),
				ID:       "an event destination",
				Resource: "Where events are delivered. Secrets are never returned.",
				Create:   "A new destination.",
				Update:   "The fields to change; a `target` replaces the whole target, and keeps its type.",
				List:     "A page of destinations, newest first.",
				Response: "The destination, without secrets."},
		},
	}
}

// EventSubscriptions is the family of event subscriptions,
// /event_subscriptions.
func EventSubscriptions() Spec {
	return Spec{
		Prefix: schemas.PrefixSubscription, Path: apiwire.EventSubscriptionsPath, ListKey: apiwire.EventSubscriptionsKey,
		Fields: append(described(Characters),
			// The CLI sets these with --source and --destination-id.
			Field{Name: "sources", Kind: List, Create: true, Update: true},
			Field{Name: "destination_ids", Kind: List, Create: true, Update: true}),
		Doc: Doc{
			Stem: "EventSubscription", Plural: "EventSubscriptions", Tag: "event_subscriptions",
			Items: "subscriptions", IDParameter: "SubscriptionIDPath",
			IDSchema: "SubscriptionID",
			Create: &Op{Summary: "Create an event subscription.",
				Description: "Routes the event kinds of `sources` to the destinations of `destination_ids`.\n" +
					"A kind appears at most once in `sources`; `filter` and `fields` are for traffic\n" +
					"kinds only. An invalid CEL filter (the message gives its position), an unknown\n" +
					"kind, or a destination id that names no destination of the account is 400.\n" +
					"409 `ERR_SLUICE_422` when a destination it names kept changing under concurrent\n" +
					"writes (sluice rewrites each destination a subscription starts naming, so that\n" +
					"deleting it at the same time fails): send the request again.\n",
				Answer: Answer{Response: "EventSubscription201"}},
			List: &Op{Summary: "List event subscriptions, newest first.",
				Answer: Answer{Description: "A page of subscriptions."}},
			Get: &Op{Summary: "Get an event subscription."},
			Update: &Op{Summary: "Update an event subscription.",
				Description: "Changes the fields sent and keeps the others. `sources` and `destination_ids`,\n" +
					"when sent, replace the whole list.\n"},
			Delete: &Op{Summary: "Delete an event subscription.",
				Errors: []int{409}},
			// The sources' schemas (EventSource and others) are the
			// source's: whether a kind takes a filter is a condition no
			// Go type says.
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.Subscription](), Input: reflect.TypeFor[apiwire.SubscriptionInput](),
				ID:       "an event subscription",
				Resource: "Which event kinds (sources) go to which destinations.",
				Create:   "A new subscription; every field is optional.",
				Update:   "The fields to change; `sources` and `destination_ids` replace the whole list.",
				List:     "A page of subscriptions, newest first.",
				Response: "The subscription."},
		},
	}
}
