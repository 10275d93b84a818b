// Package apiwire holds the bodies of sluice's management API, once: the
// resources as the API returns them and the inputs it takes, their list
// pages, the collections' paths and list keys. The API (internal/api)
// writes them, the public client (package client) reads them, and the
// sluice command prints them, so the three cannot drift apart. Fields are
// in the API's order, so that a value decoded from an answer encodes to
// the same bytes.
//
// It holds data and its JSON only: no I/O, and nothing of the server.
package apiwire
