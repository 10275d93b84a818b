// Package authheader reads the API key of a request's Authorization header, in
// the one form sluice's API takes: "Bearer <API key>", sent once.
//
// It is a leaf: it imports nothing of sluice's and nothing beyond the
// standard library, so that its fuzz target's instrumented test binary is
// small and runs tens of thousands of inputs a second (make fuzz). It is
// not where keys are looked up or checked: internal/store does that, and
// internal/api turns a MalformedError into its 400 ERR_SLUICE_212.
package authheader
