// Package strictjson decodes the JSON object of a request body into a Go
// value strictly: the body holds exactly one JSON object, each member of
// which is a field of the value named exactly (encoding/json alone would
// take "DESCRIPTION" for "description"), appears once (it would keep the
// last of two) and holds a value of its field's JSON type and range.
// Its errors say which member is at fault, by its JSON path, array indexes
// included, and what is wrong with it.
//
// It is a leaf: it imports nothing of sluice's and nothing beyond the
// standard library, so that its fuzz target's instrumented test binary is
// small and fast (make fuzz); that target's corpus decodes into apiwire's
// body types, so the test binary links apiwire and schemas, which link
// no server package. It is not where requests are read or
// answered: internal/api reads the body and turns an *Error into its API
// error, and the text checks that ingest shares (schemas.CheckJSON) come
// in through Options.CheckText.
package strictjson
