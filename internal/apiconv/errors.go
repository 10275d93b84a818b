package apiconv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Code is an error code of the API, such as ERR_SLUICE_301. Codes are
// stable: clients may branch on them. docs/errors.md lists them all.
type Code int

// The API's error codes.
const (
	CodeInternal           Code = 100 // 500: a bug or an unexpected failure
	CodeUnavailable        Code = 101 // 503: JetStream could not store the events
	CodeStoreUnavailable   Code = 102 // 503: the key store is unreachable, so keys cannot be checked
	CodeBusy               Code = 103 // 503: too many ingest requests in flight
	CodeConfigUnavailable  Code = 104 // 503: the configuration store is unreachable
	CodeStatusUnavailable  Code = 108 // 503: the delivery status cannot be read from JetStream
	CodeDLQUnavailable     Code = 107 // 503: the dead-letter stream cannot be read or changed
	CodeStorageFull        Code = 110 // 503: JetStream's storage is full, or refuses writes
	CodeAccountBusy        Code = 130 // 429: the account has its share of ingest, or of management, requests in flight
	CodeAccountBytes       Code = 131 // 429: the account's bodies in flight hold its share of bytes
	CodeBodyTooSlow        Code = 132 // 408: the body arrived slower than the minimum rate
	CodeAccountWriteRate   Code = 139 // 429: the account changes its configuration faster than its rate
	CodePolicyDenied       Code = 133 // 403, or the deny's status_code: the front door's traffic policy denied the request
	CodePolicyRateLimited  Code = 134 // 429: a rate-limit of the front door's traffic policy
	CodeVersionMissing     Code = 200 // 400: no Service-Version header
	CodeVersionUnsupported Code = 201 // 400: a Service-Version other than 2
	CodeAuthMissing        Code = 210 // 401: no bearer token
	CodeAuthInvalid        Code = 211 // 401: unknown or deleted API key
	CodeAuthMalformed      Code = 212 // 400: Authorization repeated, or of another form than Bearer <API key>
	CodeMalformedBody      Code = 300 // 400: the body is not well-formed JSON, ended early, or came too slowly
	CodeInvalidEvents      Code = 301 // 400: some events are invalid; none were stored
	CodeEmptyBatch         Code = 302 // 400: the body holds no events
	CodeBodyTooLarge       Code = 310 // 413: the body is over 10 MiB
	CodeTooManyEvents      Code = 311 // 413: more than 10,000 events in one request
	CodeEventTooLarge      Code = 312 // 413: one event is over 1 MiB, or over NATS's max_payload
	CodeRequestTooLarge    Code = 313 // 413: a management request body is over 1 MiB
	CodeContentType        Code = 320 // 415: a Content-Type other than JSON or NDJSON
	CodeMalformedRequest   Code = 330 // 400: a management request body is empty, not well-formed JSON, or more than one value
	CodeUnknownField       Code = 331 // 400: a management request has a body field, or a query parameter, the call does not take
	CodeWrongType          Code = 332 // 400: a field of a management request body has the wrong JSON type
	CodeInvalidField       Code = 333 // 400: a field breaks a rule; details.field names it
	CodeBadParameter       Code = 334 // 400: a query parameter (limit, before_id) is invalid
	CodeBadFilter          Code = 335 // 400: a list's filter does not compile: syntax, unknown field, not boolean, too long or too costly
	CodeFilterFailed       Code = 336 // 400: a list's filter failed on a resource at evaluation (cost limit of one or of the list, index or key missing)
	CodeFieldFixed         Code = 340 // 400: an update sends a field set at create only, or a body an id other than its path's
	CodeServiceDomain      Code = 341 // 400: an agent ingress's domain is, or is under, a domain of the service
	CodeNotFound           Code = 404 // 404: no such path
	CodeMethodNotAllowed   Code = 405 // 405: the path does not take this method
	CodeResourceNotFound   Code = 420 // 404: no such resource in the key's account
	CodeInUse              Code = 421 // 409: a destination still used by subscriptions
	CodeConcurrentChange   Code = 422 // 409: the resource kept changing under concurrent updates
	CodeLastAPIKey         Code = 423 // 409: deleting the account's only API key
	CodeSourceExists       Code = 424 // 409: adding a source of a kind the subscription has
	CodeNameTaken          Code = 425 // 409: a name another resource of the family in the account has
	CodeOwnerInUse         Code = 426 // 409: a bot user still owns tunnel credentials
	CodeDomainTaken        Code = 430 // 409: a domain reserved already, by any account, or overlapping another account's names
	CodeModuleNotSet       Code = 431 // 404: a module of an HTTPS edge route that is not set
	CodeRouteMatchTaken    Code = 432 // 409: a match type and match another route of the HTTPS edge has
	CodeDomainInUse        Code = 433 // 409: a reserved domain still under hostports of HTTPS edges
	CodeBackendInUse       Code = 434 // 409: a tunnel group backend still the backend of HTTPS edge routes
	CodeIngressDomainTaken Code = 428 // 409: a domain an agent ingress of any account has
	CodeDestinationLimit   Code = 440 // 409: the account has its limit of destinations
	CodeSubscriptionLimit  Code = 441 // 409: the account has its limit of subscriptions
	CodeSourceLimit        Code = 442 // 409: more sources than a subscription may have
	CodeReplayLimit        Code = 443 // 409: the account has its limit of running replays
	CodeAPIKeyLimit        Code = 444 // 409: the account has its limit of API keys
	CodeBotUserLimit       Code = 445 // 409: the account has its limit of bot users
	CodeCredentialLimit    Code = 446 // 409: the account has its limit of tunnel credentials
	CodeHTTPSEdgeLimit     Code = 449 // 409: the account has its limit of HTTPS edges
	CodeHTTPSRouteLimit    Code = 450 // 409: the account has its limit of HTTPS edge routes
	CodeRouteLimit         Code = 451 // 409: a subscription write would pass the account's limit of routes
	CodeDomainLimit        Code = 448 // 409: the account has its limit of reserved domains
	CodeAgentIngressLimit  Code = 447 // 409: the account has its limit of agent ingresses
	CodeBackendLimit       Code = 452 // 409: the account has its limit of tunnel group backends
)

// codeInfo documents a code: its HTTP status and when it is returned.
type codeInfo struct {
	status int
	when   string
}

var codes = map[Code]codeInfo{
	CodeInternal:           {http.StatusInternalServerError, "sluice failed unexpectedly; the operation id in the response finds the log line"},
	CodeUnavailable:        {http.StatusServiceUnavailable, "JetStream could not store some of the events; send the same events again, with the ids in details.event_ids, after Retry-After seconds: within the stream's 2-minute duplicate window, events already stored are not stored twice"},
	CodeStoreUnavailable:   {http.StatusServiceUnavailable, "sluice cannot check API keys because its key store is unreachable; retry after Retry-After seconds"},
	CodeBusy:               {http.StatusServiceUnavailable, "sluice as a whole has as many ingest requests in flight as it takes (--max-in-flight), or the bodies of the requests in flight (ingest and management) hold its whole budget of bytes (--max-bytes-in-flight); retry after Retry-After seconds"},
	CodeAccountBusy:        {http.StatusTooManyRequests, "the key's account has its share of ingest requests in flight (--max-account-in-flight, a quarter of sluice's by default), or of management requests, reads and changes alike (--max-account-management-in-flight, 8 by default), so that it cannot crowd out other accounts; retry after Retry-After seconds, or send fewer requests at once"},
	CodeAccountBytes:       {http.StatusTooManyRequests, "the bodies of the account's requests in flight (ingest and management) hold its share of bytes (--max-account-bytes-in-flight, a quarter of sluice's budget by default); retry after Retry-After seconds, or send fewer or smaller requests at once"},
	CodeAccountWriteRate:   {http.StatusTooManyRequests, "the account is changing its configuration (management calls that create, update or delete, replays, redrives, tests) faster than sluice allows one account: after a burst of 50, 5 changes a second by default (serve --account-write-rate, --account-write-burst); wait Retry-After seconds and send it again, or make fewer changes at once"},
	CodePolicyDenied:       {http.StatusForbidden, "a deny action of the traffic policy (serve --traffic-policy) refused the request, before sluice looked at it; the status is the action's status_code (403 by default), and details.rule names the rule: ask the operator what it refuses"},
	CodePolicyRateLimited:  {http.StatusTooManyRequests, "a rate-limit action of the traffic policy (serve --traffic-policy) refused the request, before sluice looked at it; details.rule names the rule and details.retry_after the seconds: wait Retry-After seconds and send it again, or send fewer requests"},
	CodeBodyTooSlow:        {http.StatusRequestTimeout, "the body of an ingest or management request arrived slower than the minimum rate (by default 10 KiB in every 10 s, --min-body-rate), so the request was cut; send it faster, or in smaller requests"},
	CodeConfigUnavailable:  {http.StatusServiceUnavailable, "sluice cannot read or write its configuration store (subscriptions, destinations, API keys) because it is unreachable; retry after Retry-After seconds"},
	CodeStatusUnavailable:  {http.StatusServiceUnavailable, "sluice cannot read a destination's delivery status (the SLUICE_STATUS bucket, the route consumers, SLUICE_DLQ) because JetStream is unreachable; retry after Retry-After seconds"},
	CodeDLQUnavailable:     {http.StatusServiceUnavailable, "sluice cannot read or change its dead-letter stream (SLUICE_DLQ) because JetStream is unreachable; retry after Retry-After seconds"},
	CodeStorageFull:        {http.StatusServiceUnavailable, "JetStream's storage is full (or refuses writes for another reason the message gives), so nothing can be stored: neither events nor changes; sluice takes writes again by itself within seconds of space being freed. Send the same request again after Retry-After seconds (with the same event ids, for events)"},
	CodeVersionMissing:     {http.StatusBadRequest, "the Service-Version header is missing; send Service-Version: 2"},
	CodeVersionUnsupported: {http.StatusBadRequest, "the Service-Version header names a version sluice does not support; send Service-Version: 2"},
	CodeAuthMissing:        {http.StatusUnauthorized, "no Authorization: Bearer <API key> header"},
	CodeAuthInvalid:        {http.StatusUnauthorized, "the API key is unknown or was deleted"},
	CodeAuthMalformed:      {http.StatusBadRequest, "the Authorization header is sent more than once, or is not exactly the scheme Bearer (in any case), one space and an API key (1 to 256 printable ASCII characters without spaces) with nothing after it; send exactly one header Authorization: Bearer <API key>. It is checked before the traffic policy and the key, so that both see the same key; the message never quotes the header"},
	CodeMalformedBody:      {http.StatusBadRequest, "the body is not well-formed JSON (the message gives the byte offset), it ended before its Content-Length, or it did not arrive within the server's read timeout"},
	CodeInvalidEvents:      {http.StatusBadRequest, "some events are invalid; details.errors lists each with its index; nothing was stored"},
	CodeEmptyBatch:         {http.StatusBadRequest, "the body holds no events"},
	CodeBodyTooLarge:       {http.StatusRequestEntityTooLarge, "the body is over 10 MiB; split it into several requests"},
	CodeTooManyEvents:      {http.StatusRequestEntityTooLarge, "the body holds more than 10,000 events; split it into several requests"},
	CodeEventTooLarge:      {http.StatusRequestEntityTooLarge, "an event is over 1 MiB, or with its envelope over the NATS server's max_payload; details.event_ids, when present, lists the ids of the batch for resending the other events"},
	CodeRequestTooLarge:    {http.StatusRequestEntityTooLarge, "the body of a management request (not ingest) is over 1 MiB"},
	CodeMalformedRequest:   {http.StatusBadRequest, "the body of a management request is empty, not well-formed JSON (the message gives the byte offset; invalid UTF-8 included), holds more than one JSON value, or holds what JSON readers read differently: a member twice, a lone UTF-16 surrogate escape such as \\ud800, a number beyond float64's range (details.field names it)"},
	CodeUnknownField:       {http.StatusBadRequest, "the body of a management request has a field the call does not take, or its query a parameter the call does not take; the message names it, and details.field the field or details.parameter the parameter (the message also lists the parameters the call takes)"},
	CodeWrongType:          {http.StatusBadRequest, "a field of the body of a management request has the wrong JSON type; the message and details.field name it"},
	CodeInvalidField:       {http.StatusBadRequest, "a field breaks a rule (length, ARN, exactly one target, target type change, ...); details.field is its JSON path and the message says how to fix it"},
	CodeBadParameter:       {http.StatusBadRequest, "a query parameter is invalid: limit not from 1 to 100, or a malformed before_id; details.parameter names it"},
	CodeBadFilter:          {http.StatusBadRequest, "a list's ?filter= is not a CEL filter of the family: it does not parse, names a field the resource does not have, is not a boolean, is longer than 4096 bytes or its estimated cost on one resource is over 25,000; details.issues gives each problem with its line and column, and the message the fields of obj and a filter that works (docs/api.md#filtering-lists)"},
	CodeFilterFailed:       {http.StatusBadRequest, "a list's ?filter= failed on a resource, named by details.id: it went over its cost limit (25,000 per resource, or 2,500,000 over the list), indexed past the end of a list, read a key a map lacks or divided by zero; guard it, as with size(), in or has(), or make it cheaper, and send the list again"},
	CodeFieldFixed:         {http.StatusBadRequest, "an update sends a field that only a create sets (the domain of an agent ingress or of a reserved domain), or a body repeats what its path names (id, a route's edge_id, a source's subscription_id or type) with another value; details.field names it: send the path's value or leave it out, and to change it, create another resource with the new value instead"},
	CodeServiceDomain:      {http.StatusBadRequest, "an agent ingress's domain is one of the service's own domains (serve --service-domains), or a name under one; details.field names it: give a domain the account owns"},
	CodeContentType:        {http.StatusUnsupportedMediaType, "the Content-Type is neither application/json nor application/x-ndjson"},
	CodeNotFound:           {http.StatusNotFound, "no such path"},
	CodeMethodNotAllowed:   {http.StatusMethodNotAllowed, "the path does not accept this method; the Allow header lists those it does"},
	CodeResourceNotFound:   {http.StatusNotFound, "the key's account has no resource with this id (a resource of another account is not found either)"},
	CodeInUse:              {http.StatusConflict, "the destination is still used by event subscriptions, listed in details.subscriptions; remove it from them, or delete them, first"},
	CodeOwnerInUse:         {http.StatusConflict, "the bot user owns tunnel credentials, listed in details.credentials; delete them, or give them another owner or none (PATCH /credentials/{id} with owner_id \"\"), first"},
	CodeConcurrentChange:   {http.StatusConflict, "the resource kept changing under concurrent updates; send the request again"},
	CodeLastAPIKey:         {http.StatusConflict, "the API key is the account's only one, and deleting it would lock the account out; create another key first"},
	CodeSourceExists:       {http.StatusConflict, "the subscription has a source of this event kind already; change it with PATCH /event_subscriptions/{id}/sources/{type}"},
	CodeNameTaken:          {http.StatusConflict, "another resource of the family in the account has this name (bot users: ignoring case); details.field names the field: choose another name"},
	CodeDomainTaken:        {http.StatusConflict, "the domain is reserved already, by your account or another (which is not named), or overlaps a name another account holds: a reserved domain, its wildcard or an agent ingress's domain, and every name under it, belong to one account; choose another domain, or delete what holds it"},
	CodeIngressDomainTaken: {http.StatusConflict, "an agent ingress of this account or of another has the domain already (a domain is unique across all accounts, ignoring case); details.field names it: choose another domain, or delete the agent ingress that has it"},
	CodeModuleNotSet:       {http.StatusNotFound, "the HTTPS edge route has no module of this kind (circuit_breaker, websocket_tcp_converter, backend, traffic_policy): set one with PUT /edges/https/{edge_id}/routes/{id}/<module>"},
	CodeRouteMatchTaken:    {http.StatusConflict, "another route of the HTTPS edge has this match_type and match (the path's case counts); details.field names match: change the other route, or choose another match"},
	CodeDomainInUse:        {http.StatusConflict, "the reserved domain covers hostports of HTTPS edges, listed in details.https_edges, that no other reserved domain of the account covers (released, it could be reserved by another account); remove those hostports (PATCH /edges/https/{edge_id}), or delete the edges, first"},
	CodeBackendInUse:       {http.StatusConflict, "the tunnel group backend is the backend of HTTPS edge routes, listed in details.https_edge_routes (a disabled backend module counts); remove it from them (DELETE /edges/https/{edge_id}/routes/{id}/backend), give them another, or delete them, first"},
	CodeBackendLimit:       {http.StatusConflict, "the account has as many tunnel group backends as sluice allows one account (100 by default, serve --max-tunnel-group-backends); delete one, or have the limit raised; details.limit and details.max name it"},
	CodeDestinationLimit:   {http.StatusConflict, "the account has as many event destinations as sluice allows one account (100 by default, serve --max-destinations); delete one, or have the limit raised; details.limit and details.max name it"},
	CodeSubscriptionLimit:  {http.StatusConflict, "the account has as many event subscriptions as sluice allows one account (1000 by default, serve --max-subscriptions); delete one, or have the limit raised; details.limit and details.max name it"},
	CodeSourceLimit:        {http.StatusConflict, "the subscription would have more sources than sluice allows one subscription (by default one per event kind, serve --max-sources-per-subscription); details.limit and details.max name it"},
	CodeReplayLimit:        {http.StatusConflict, "the account has as many replays running as sluice allows one account (5 by default, serve --max-running-replays); wait for one to finish, or have the limit raised; details.limit and details.max name it"},
	CodeAPIKeyLimit:        {http.StatusConflict, "the account has as many API keys as sluice allows one account (100 by default, serve --max-api-keys); delete one, or have the limit raised; details.limit and details.max name it"},
	CodeAgentIngressLimit:  {http.StatusConflict, "the account has as many agent ingresses as sluice allows one account (100 by default, serve --max-agent-ingresses); delete one, or have the limit raised; details.limit and details.max name it"},
	CodeBotUserLimit:       {http.StatusConflict, "the account has as many bot users as sluice allows one account (100 by default, serve --max-bot-users); delete one, or have the limit raised; details.limit and details.max name it"},
	CodeCredentialLimit:    {http.StatusConflict, "the account has as many tunnel credentials as sluice allows one account (100 by default, serve --max-credentials); delete one, or have the limit raised; details.limit and details.max name it"},
	CodeHTTPSEdgeLimit:     {http.StatusConflict, "the account has as many HTTPS edges as sluice allows one account (100 by default, serve --max-https-edges); delete one, or have the limit raised; details.limit and details.max name it"},
	CodeRouteLimit:         {http.StatusConflict, "the subscription written would give the account more routes (destinations named by its subscriptions, one per destination per subscription) than sluice allows one account (100 by default, serve --max-routes); name fewer destinations, delete a subscription, or have the limit raised; details.limit, details.max and details.would say how many"},
	CodeHTTPSRouteLimit:    {http.StatusConflict, "the account has as many routes of HTTPS edges, all its edges together, as sluice allows one account (300 by default, serve --max-https-edge-routes, at most 450); delete one, or have the limit raised; details.limit and details.max name it"},
	CodeDomainLimit:        {http.StatusConflict, "the account has as many reserved domains as sluice allows one account (100 by default, serve --max-reserved-domains); delete one, or have the limit raised; details.limit and details.max name it"},
}

// String returns the code as it appears in error bodies: "ERR_SLUICE_301".
func (c Code) String() string { return "ERR_SLUICE_" + strconv.Itoa(int(c)) }

// Status returns the HTTP status the code is sent with.
func (c Code) Status() int { return codes[c].status }

// Error is an API error, as sent in a response body.
type Error struct {
	Code Code
	Msg  string // what is wrong and how to fix it
	// Details are the fields of details besides operation_id. Every value
	// is a string, as the official API clients read details: one that is
	// not text by nature is its JSON text (DetailJSON).
	Details map[string]string
}

// Error returns the code and the message, as in "ERR_SLUICE_301: ...".
func (e *Error) Error() string { return e.Code.String() + ": " + e.Msg }

// NewError returns the error of the code, its message formatted as
// fmt.Sprintf does.
func NewError(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON shape of every error response.
type errorBody struct {
	ErrorCode  string            `json:"error_code"`
	StatusCode int               `json:"status_code"`
	Msg        string            `json:"msg"`
	Details    map[string]string `json:"details"`
}

// WriteError sends e with the operation id of the request.
func WriteError(w http.ResponseWriter, r *http.Request, e *Error) {
	details := map[string]string{"operation_id": OperationID(r.Context())}
	for k, v := range e.Details {
		details[k] = v
	}
	WriteJSON(w, e.Code.Status(), errorBody{
		ErrorCode:  e.Code.String(),
		StatusCode: e.Code.Status(),
		Msg:        e.Msg,
		Details:    details,
	})
}

// DetailJSON returns v, a value of details that is not text by nature (a
// number, a list, an object), as details carry it: its compact JSON text,
// such as "100" or "[\"esb_1\",\"esb_2\"]", which one json.Unmarshal reads
// back.
func DetailJSON(v any) string {
	b, err := encodeJSON(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// WriteJSON sends v as JSON, without escaping <, > and & (filters hold
// them, and people read the answers).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := encodeJSON(v)
	if err != nil {
		status, body = http.StatusInternalServerError, encodingFailed
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// encodingFailed is the body of an answer whose value did not encode.
var encodingFailed = []byte(`{"error_code":"ERR_SLUICE_100","status_code":500,"msg":"encoding the response failed","details":{}}` + "\n")

// encodeJSON encodes v as the API writes its bodies: without escaping <,
// > and &, with a newline after.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
