// Package client is a typed client of sluice's management API: API keys,
// bot users, event destinations with their delivery status, test writes
// and dead letters, event subscriptions with their sources and replays.
// Its request and response types are package apiwire's, which the API
// itself writes, field for field and in the API's order.
//
// A Client makes one request per call, each bounded by its timeout and by
// the call's context; with WithRateLimitRetry, it sends a request the API
// refused with 429 again after the wait the reply's Retry-After asks. A reply that is not 2xx is an
// *Error: the API's error body (ErrorBody), or the start of a reply that is
// not the API's, such as a proxy's. A request that got no reply is a
// *TransportError. A 2xx reply that does not decode is a *DecodeError.
// errors.Is tells an *Error's 404, 409 and 401 by ErrNotFound, ErrConflict
// and ErrUnauthorized. The API key goes only to the API's own scheme and
// host, and printing a Client or Creds shows no secret.
//
// Families (Family) give Create, Get, List, ListAll, Update and Delete on
// a collection; a new collection of the API is a NewFamily call with its
// item and input types. A list whose items are not created one by one,
// such as a destination's dead letters, is a Collection: List, Next,
// ListAll and Rest.
//
// It is not the API itself (internal/api) nor the sluice command, which
// prints what this package returns.
package client
