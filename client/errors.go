package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// errorBodyShown is how much of a reply that is not the API's an Error
// shows.
const errorBodyShown = 200

// ErrorBody is the body of every error reply of the API.
type ErrorBody struct {
	// ErrorCode is the error's code, such as ERR_SLUICE_333 (docs/errors.md).
	ErrorCode string `json:"error_code"`
	// StatusCode is the reply's HTTP status.
	StatusCode int `json:"status_code"`
	// Msg says what is wrong and how to fix it.
	Msg string `json:"msg"`
	// Details holds operation_id, and the field or parameter at fault
	// when there is one. Every value is a string: one that is not text by
	// nature, such as a list of ids, is its JSON text (docs/errors.md).
	Details map[string]string `json:"details"`
}

// Errors an *Error matches with errors.Is, by its status, so that a caller
// can branch on what happened without reading codes.
var (
	// ErrNotFound matches a 404: the account has no such resource.
	ErrNotFound = errors.New("not found")
	// ErrConflict matches a 409: the request conflicts with what exists,
	// such as a name another resource has, or a resource in use.
	ErrConflict = errors.New("conflict")
	// ErrUnauthorized matches a 401: the API key is missing, unknown or
	// deleted.
	ErrUnauthorized = errors.New("unauthorized")
)

// Error is an error reply of the API, or of a proxy in front of it.
type Error struct {
	Method, URL string // the request
	Status      int
	Code        string // such as ERR_SLUICE_333; "" when the reply is not the API's
	Msg         string // the API's msg, or the start of a reply that is not the API's
	OperationID string
	// Details are the fields of details besides operation_id, such as
	// field or parameter, as JSON.
	Details map[string]json.RawMessage

	// retryAfter is the wait the reply's Retry-After header asked, when
	// hasRetryAfter: for WithRateLimitRetry.
	retryAfter    time.Duration
	hasRetryAfter bool
}

// ParseError returns the error of a reply with the status and body to the
// request method endpoint: the API's ErrorBody, or, when body is not one,
// the start of body.
func ParseError(method, endpoint string, status int, body []byte) *Error {
	e := &Error{Method: method, URL: endpoint, Status: status}
	var b struct {
		ErrorCode string                     `json:"error_code"`
		Msg       string                     `json:"msg"`
		Details   map[string]json.RawMessage `json:"details"`
	}
	if err := json.Unmarshal(body, &b); err == nil && b.ErrorCode != "" {
		e.Code, e.Msg, e.Details = b.ErrorCode, b.Msg, b.Details
		if id, ok := e.Details["operation_id"]; ok {
			_ = json.Unmarshal(id, &e.OperationID)
			delete(e.Details, "operation_id")
		}
		return e
	}
	e.Msg = http.StatusText(status)
	if text := strings.TrimSpace(strings.ToValidUTF8(string(body), "")); text != "" {
		if len(text) > errorBodyShown {
			text = strings.ToValidUTF8(text[:errorBodyShown], "") + "..."
		}
		e.Msg = text
	}
	return e
}

// Is reports whether target is the sentinel of e's status: ErrNotFound,
// ErrConflict or ErrUnauthorized.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	}
	return false
}

// Error returns the API's code, status and message, the details, and the
// operation id, as in
// `ERR_SLUICE_333 (400): msg [details.field=sources[0].type] (operation op_...)`;
// or, for a reply that is not the API's, the request, the status and the
// start of the reply.
func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("%s %s: HTTP %d, not an answer of the sluice API: %s", e.Method, e.URL, e.Status, e.Msg)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d): %s", e.Code, e.Status, e.Msg)
	for _, key := range slices.Sorted(maps.Keys(e.Details)) {
		value := string(e.Details[key])
		var text string
		if json.Unmarshal(e.Details[key], &text) == nil {
			value = text
		}
		fmt.Fprintf(&b, " [details.%s=%s]", key, value)
	}
	if e.OperationID != "" {
		fmt.Fprintf(&b, " (operation %s)", e.OperationID)
	}
	return b.String()
}

// TransportError is a request that got no reply: the API could not be
// reached, or did not answer within the client's timeout.
type TransportError struct {
	Method, URL string        // the request
	Timeout     time.Duration // the timeout that ran out; 0 when Err says why
	Err         error         // why there was no reply
	hint        string        // WithUnreachableHint
}

// Error says which request got no reply and why, followed by the client's
// hint when it has one.
func (e *TransportError) Error() string {
	text := fmt.Sprintf("%s %s: %v", e.Method, e.URL, e.Err)
	if e.Timeout > 0 {
		text = fmt.Sprintf("%s %s: no answer within %s", e.Method, e.URL, e.Timeout)
	}
	if e.hint != "" {
		text += "; " + e.hint
	}
	return text
}

// Unwrap returns why the request got no reply.
func (e *TransportError) Unwrap() error { return e.Err }

// DecodeError is a 2xx reply that is not what the call returns.
type DecodeError struct {
	Method, URL string // the request
	Body        []byte // the reply
	Err         error  // why it does not decode
}

// Error says which request's reply does not decode, and why.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("the answer of %s %s is not what the API answers: %v", e.Method, e.URL, e.Err)
}

// Unwrap returns why the reply does not decode.
func (e *DecodeError) Unwrap() error { return e.Err }
