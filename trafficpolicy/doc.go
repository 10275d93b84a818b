// Package trafficpolicy loads and runs traffic policies: documents of
// rules that run on HTTP requests (phase on_http_request) and on the
// answers to them (on_http_response), each rule a list of CEL expressions
// that must all hold and of actions run in order: rate-limit
// (specification section 8), custom-response, deny, log, and in
// on_http_request restrict-ips, basic-auth, compress-response and
// openid-connect, whose logins the caller runs (WithOpenIDConnect).
//
// Parse checks a whole document when it is loaded, and refuses it with
// every mistake, each with the path of the bad element, its line and
// column, and what is allowed; nothing is compiled per request. A Policy
// runs on any number of requests at once, as a middleware (Handler) or
// per request (Serve), which lets a caller swap policies on reload with
// an atomic pointer. WithCountsOf carries the counts of unchanged
// rate-limit actions into a reloaded policy.
//
// Expressions see req.method, req.host, req.url.path, req.url.query,
// req.headers (lower-cased names, each a list of values), conn.client_ip,
// api_key.id (the id of the request's API key, as the caller's WithAPIKey
// tells it; "" without one), in on_http_response res.status_code and
// res.headers, and the result
// variables of the last rate-limit that ran:
// actions.service.rate_limit.bucket_key, .limited, .error.code and
// .error.message, and those of the last openid-connect that ran:
// actions.service.oidc.user.id, .name and .email ("" before one let a
// user through). The macros getReqHeader('Name') (the header's values,
// an empty list when absent) and hasReqHeader('Name') read request headers
// by any case. A bucket_key of rate-limit is made of req.host,
// conn.client_ip, api_key.id and headers (specification section 8, and
// api_key.id, sluice's own, which lets a policy count per authenticated
// key rather than per spelling of a header).
//
// The counts of rate-limit live in the process: each process running a
// policy counts on its own (specification section 8: capacity is applied
// independently by each ingress server). SlotDuration documents the
// sliding window.
//
// WithLogs tells the caller what each log action logged of a request, so
// that the edge can put it in the request's event.
//
// It knows nothing of sluice's handlers, files or metrics: the caller
// reads the document, wires an Observer and serves.
package trafficpolicy
