package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/api"
)

const (
	// apiRequestTimeout bounds one request of the management commands,
	// reply included.
	apiRequestTimeout = 30 * time.Second
	// apiMaxReplyBytes bounds a reply: a page of 100 resources is far less.
	apiMaxReplyBytes = 16 << 20
	// apiErrorBodyShown is how much of a reply that is not the API's an
	// error shows.
	apiErrorBodyShown = 200
	// apiURLHint says what to check when the API cannot be reached.
	apiURLHint = "is sluice serve running there? Give its address with --api-url (or SLUICE_API_URL)"
)

// apiClient calls the management API of a running sluice: one request per
// call, no retries, each within timeout. It is safe for concurrent use.
type apiClient struct {
	http    *http.Client
	baseURL string // scheme and host, without a trailing slash
	apiKey  string
	timeout time.Duration // apiRequestTimeout
}

func newAPIClient(baseURL, apiKey string) *apiClient {
	return &apiClient{
		http:    &http.Client{},
		baseURL: strings.TrimRight(baseURL, "/"),
		apiKey:  apiKey,
		timeout: apiRequestTimeout,
	}
}

// get returns the JSON reply of GET target: a path of the API, or a full
// URL the API returned, such as a next_page_uri.
func (c *apiClient) get(ctx context.Context, target string) ([]byte, error) {
	return c.do(ctx, http.MethodGet, target, nil)
}

// getWithHeader is get that also returns the reply's header.
func (c *apiClient) getWithHeader(ctx context.Context, target string) ([]byte, http.Header, error) {
	return c.exchange(ctx, http.MethodGet, target, nil)
}

// send returns the JSON reply of a POST or PATCH of body to the path.
func (c *apiClient) send(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	return c.do(ctx, method, path, body)
}

// delete deletes the resource at the path.
func (c *apiClient) delete(ctx context.Context, path string) error {
	_, err := c.do(ctx, http.MethodDelete, path, nil)
	return err
}

// do sends one request and returns the body of a 2xx reply. It returns an
// *apiError for any other status, and an error naming the URL when the
// API could not be reached or did not answer within c.timeout.
func (c *apiClient) do(ctx context.Context, method, target string, body []byte) ([]byte, error) {
	raw, _, err := c.exchange(ctx, method, target, body)
	return raw, err
}

// exchange is do that also returns the reply's header.
func (c *apiClient) exchange(ctx context.Context, method, target string, body []byte) ([]byte, http.Header, error) {
	endpoint := target
	if strings.HasPrefix(target, "/") {
		endpoint = c.baseURL + target
	}
	reqCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(reqCtx, method, endpoint, reader)
	if err != nil {
		return nil, nil, fmt.Errorf("building the request %s %s: %w", method, endpoint, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set(api.HeaderVersion, api.SupportedVersion)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, c.transportError(ctx, reqCtx, method, endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, apiMaxReplyBytes))
	if err != nil {
		return nil, nil, c.transportError(ctx, reqCtx, method, endpoint, fmt.Errorf("reading the reply: %w", err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, newAPIError(method, endpoint, resp.StatusCode, raw)
	}
	return raw, resp.Header, nil
}

// transportError says why a request got no reply: ctx ended, the request
// timed out, or the API could not be reached.
func (c *apiClient) transportError(ctx, reqCtx context.Context, method, endpoint string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s %s: %w", method, endpoint, context.Cause(ctx))
	}
	if errors.Is(reqCtx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s %s: no answer within %s; %s", method, endpoint, c.timeout, apiURLHint)
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // its text repeats the method and URL
	}
	return fmt.Errorf("%s %s: %w; %s", method, endpoint, err, apiURLHint)
}

// apiError is an error reply of the API, or of a proxy in front of it.
type apiError struct {
	Method, URL string // the request
	Status      int
	Code        string // such as ERR_SLUICE_333; "" when the reply is not the API's
	Msg         string // the API's msg, or the start of a reply that is not the API's
	OperationID string
	// Details are the fields of details besides operation_id, such as
	// field or parameter, as JSON.
	Details map[string]json.RawMessage
}

func newAPIError(method, endpoint string, status int, raw []byte) *apiError {
	e := &apiError{Method: method, URL: endpoint, Status: status}
	var body struct {
		ErrorCode string                     `json:"error_code"`
		Msg       string                     `json:"msg"`
		Details   map[string]json.RawMessage `json:"details"`
	}
	if err := json.Unmarshal(raw, &body); err == nil && body.ErrorCode != "" {
		e.Code, e.Msg, e.Details = body.ErrorCode, body.Msg, body.Details
		if id, ok := e.Details["operation_id"]; ok {
			_ = json.Unmarshal(id, &e.OperationID)
			delete(e.Details, "operation_id")
		}
		return e
	}
	e.Msg = http.StatusText(status)
	if text := strings.TrimSpace(strings.ToValidUTF8(string(raw), "")); text != "" {
		if len(text) > apiErrorBodyShown {
			text = strings.ToValidUTF8(text[:apiErrorBodyShown], "") + "..."
		}
		e.Msg = text
	}
	return e
}

// Error returns the API's code, status and message, the details, and the
// operation id, as in
// `ERR_SLUICE_333 (400): msg [details.field=sources[0].type] (operation op_...)`;
// or, for a reply that is not the API's, the request, the status and the
// start of the reply.
func (e *apiError) Error() string {
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
