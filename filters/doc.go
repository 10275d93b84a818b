// Package filters checks and evaluates the CEL filters and field selections
// of event subscription sources (specification section 6; docs/architecture.md#components
// and #the-management-api).
//
// Everything is built from the event catalogue of package schemas, once: an
// Env holds one CEL environment per traffic kind, in which each filterable
// field of the kind is a variable named by its path under ev, such as
// ev.conn.client_ip. The management API uses an Env to check a source when
// it is written (Compile for the filter, CheckFields for the field
// selection), so an invalid filter is a 400 with CEL's message and position.
// The delivery engine uses a Cache to get the compiled Program of each
// route's filter, fills a reusable Fields with the values of the fields the
// program references (Program.Fields), and calls Program.Match per event.
// Nothing is parsed or type-checked per event.
//
// Every evaluation is bounded. The cost estimate Compile checks against
// MaxCost assumes each string field is as long as its maximum in the
// catalogue (schemas.Field.MaxBytes), which validation enforces on events
// and Fields.SetString enforces again; regular expressions must be string
// literals, compiled once and charged by their program's size; Match
// enforces MaxCost, bounds loops by MaxEvalTime and recovers from panics.
//
// Readers of delivered events (sluice tail) use CompileReading: a
// subscription's filter of one kind that may also use the envelope's
// fields (envelope.event_type, ...), evaluated on the event's JSON.
//
// The management API's lists take a filter of objects too (ObjectEnv,
// objects.go): a CEL expression over each resource as the API shows it,
// bound to obj, type-checked against the JSON fields of the family's body
// type and bounded the same way, by MaxObjectCost per resource and
// MaxObjectListCost per list (ObjectProgram.Matcher).
//
// Filters and field selections apply only to traffic kinds; for an audit
// kind every function here returns ErrNotTraffic, but CompileReading,
// whose filters of an audit kind may use only the envelope's fields.
//
// It is not for extracting values from events or for projecting selected
// fields into the delivered JSON: the delivery engine reads the event's JSON
// and does both. It knows nothing of subscriptions, storage or HTTP.
package filters
