package resource

import (
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
	}
}
