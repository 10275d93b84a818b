package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	// HeaderVersion is the header that names the version of the API a
	// request is written for.
	HeaderVersion = "Service-Version"
	// Version is the version of the API this package speaks.
	Version = "2"
	// DefaultTimeout bounds one request, reply included, unless WithTimeout
	// says otherwise.
	DefaultTimeout = 30 * time.Second
	// maxReplyBytes bounds a reply: a page of 100 resources is far less.
	maxReplyBytes = 16 << 20
)

// Client calls the management API of a running sluice with an API key. It
// is safe for concurrent use.
type Client struct {
	http    *http.Client
	baseURL string // scheme and host, without a trailing slash
	// authorize sets the request's API key, held in the closure so that
	// printing the client, even with %+v, cannot show it.
	authorize func(*http.Request)
	timeout   time.Duration
	hint      string         // appended to a TransportError
	retry     RateLimitRetry // WithRateLimitRetry; none by default
	// sleep waits between attempts (sleepContext), and now reads the
	// clock for a Retry-After date: replaced in tests.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

// Option changes a Client that New builds.
type Option func(*Client)

// WithTimeout bounds each request, reply included, by d instead of
// DefaultTimeout; 0 or less means no bound but the context's.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) { c.timeout = d }
}

// WithUnreachableHint appends hint to the message of every
// *TransportError, to say what to check when the API gives no answer,
// such as where its address is set.
func WithUnreachableHint(hint string) Option {
	return func(c *Client) { c.hint = hint }
}

// New returns a client of the API at baseURL, such as
// http://127.0.0.1:8080, authenticated by the API key apiKey.
func New(baseURL, apiKey string, opts ...Option) *Client {
	c := &Client{
		http:    &http.Client{},
		baseURL: strings.TrimRight(baseURL, "/"),
		authorize: func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+apiKey)
		},
		timeout: DefaultTimeout,
		sleep:   sleepContext,
		now:     time.Now,
	}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// CallOption asks a call for more than its typed result.
type CallOption func(*call)

type call struct {
	body   *[]byte
	header *http.Header
}

// Reply has the call store the body of its (last) 2xx reply, as the API
// sent it, in *body: to show the API's JSON as it is.
func Reply(body *[]byte) CallOption {
	return func(c *call) { c.body = body }
}

// ReplyHeader has the call store the header of its (last) 2xx reply in
// *header.
func ReplyHeader(header *http.Header) CallOption {
	return func(c *call) { c.header = header }
}

// Do sends one request and decodes its 2xx reply into out. target is a
// path of the API, such as /api_keys, or a URL the API returned. in, when
// not nil, is the JSON body: a []byte or json.RawMessage is sent as it is,
// anything else is encoded without escaping <, > and &. out, when not nil,
// is what json.Unmarshal decodes the reply into.
//
// It returns an *Error for a reply that is not 2xx, a *TransportError when
// the API could not be reached or did not answer within the timeout, the
// cause of ctx when ctx ended, and a *DecodeError when the reply is not
// what out can hold.
func (c *Client) Do(ctx context.Context, method, target string, in, out any, opts ...CallOption) error {
	var o call
	for _, opt := range opts {
		opt(&o)
	}
	body, err := encodeBody(in)
	if err != nil {
		return err
	}
	raw, header, endpoint, err := c.exchangeRetrying(ctx, method, target, body)
	if err != nil {
		return err
	}
	if o.body != nil {
		*o.body = raw
	}
	if o.header != nil {
		*o.header = header
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &DecodeError{Method: method, URL: endpoint, Body: raw, Err: err}
	}
	return nil
}

// encodeBody returns the JSON body of in; nil for none.
func encodeBody(in any) ([]byte, error) {
	switch v := in.(type) {
	case nil:
		return nil, nil
	case []byte:
		return v, nil
	case json.RawMessage:
		return v, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return nil, fmt.Errorf("encoding JSON: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// exchange sends one request and returns the body and header of a 2xx
// reply, and the URL it went to.
func (c *Client) exchange(ctx context.Context, method, target string, body []byte) ([]byte, http.Header, string, error) {
	endpoint, err := c.endpoint(target)
	if err != nil {
		return nil, nil, target, fmt.Errorf("%s %s: %w", method, target, err)
	}
	reqCtx, cancel := context.WithCancel(ctx)
	if c.timeout > 0 {
		reqCtx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	defer cancel()
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(reqCtx, method, endpoint, reader)
	if err != nil {
		return nil, nil, endpoint, fmt.Errorf("building the request %s %s: %w", method, endpoint, err)
	}
	c.authorize(req)
	req.Header.Set(HeaderVersion, Version)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, endpoint, c.transportError(ctx, reqCtx, method, endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return nil, nil, endpoint, c.transportError(ctx, reqCtx, method, endpoint, fmt.Errorf("reading the reply: %w", err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := ParseError(method, endpoint, resp.StatusCode, raw)
		e.retryAfter, e.hasRetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
		return nil, nil, endpoint, e
	}
	return raw, resp.Header, endpoint, nil
}

// endpoint returns the URL of target, a path of the API or a URL the API
// returned. It refuses a URL of another scheme or host than the API's:
// the request carries the API key, which must go nowhere else.
func (c *Client) endpoint(target string) (string, error) {
	if strings.HasPrefix(target, "/") {
		return c.baseURL + target, nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("not a path or URL of the API: %w", err)
	}
	base, err := url.Parse(c.baseURL)
	if err != nil {
		return "", fmt.Errorf("the client's base URL %q: %w", c.baseURL, err)
	}
	if !strings.EqualFold(u.Scheme, base.Scheme) || !strings.EqualFold(u.Host, base.Host) {
		return "", fmt.Errorf("refusing to send the API key to %s://%s, which is not the API at %s", u.Scheme, u.Host, c.baseURL)
	}
	return target, nil
}

// transportError says why a request got no reply: ctx ended, the request
// timed out, or the API could not be reached.
func (c *Client) transportError(ctx, reqCtx context.Context, method, endpoint string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s %s: %w", method, endpoint, context.Cause(ctx))
	}
	e := &TransportError{Method: method, URL: endpoint, Err: err, hint: c.hint}
	if errors.Is(reqCtx.Err(), context.DeadlineExceeded) {
		e.Timeout = c.timeout
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		e.Err = urlErr.Err // its text repeats the method and URL
	}
	return e
}
