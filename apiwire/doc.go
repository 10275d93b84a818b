// Package apiwire holds the bodies of sluice's management API, once: the
// resources as the API returns them and the inputs it takes, their list
// pages, the collections' paths and list keys. The API (internal/api)
// writes them, the public client (package client) reads them, and the
// sluice command prints them, so the three cannot drift apart. Fields are
// in the API's order, so that a value decoded from an answer encodes to
// the same bytes.
//
// The resources' types and their inputs are also where docs/openapi.yaml
// gets the families' schemas (internal/tools/openapigen): a field's doc
// comment, above it, is the description of its property there, and
// //openapi:ref and //openapi:schema lines say what its Go type cannot;
// a note for Go readers only goes in the comment at the end of the
// field's line.
//
// It holds data and its JSON only: no I/O, and nothing of the server.
package apiwire
