package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/client"
)

// apiURLHint says what to check when the API cannot be reached.
const apiURLHint = "is sluice serve running there? Give its address with --api-url (or SLUICE_API_URL)"

// apiClient is where the management commands reach the API: its address,
// key and per-request timeout (client.DefaultTimeout, shorter for a
// probe), from which api makes the typed client.
type apiClient struct {
	http    *http.Client
	baseURL string
	apiKey  string
	timeout time.Duration
}

func newAPIClient(baseURL, apiKey string) *apiClient {
	return &apiClient{http: &http.Client{}, baseURL: strings.TrimRight(baseURL, "/"), apiKey: apiKey, timeout: client.DefaultTimeout}
}

// api returns the typed client of the API, whose errors of a request that
// got no answer say to check --api-url.
func (c *apiClient) api() *client.Client {
	return client.New(c.baseURL, c.apiKey, client.WithHTTPClient(c.http), client.WithTimeout(c.timeout),
		client.WithUnreachableHint(apiURLHint))
}

// get returns the JSON reply of GET target: a path of the API, or a full
// URL the API returned.
func (c *apiClient) get(ctx context.Context, target string) ([]byte, error) {
	raw, _, err := c.getWithHeader(ctx, target)
	return raw, err
}

// getWithHeader is get that also returns the reply's header.
func (c *apiClient) getWithHeader(ctx context.Context, target string) ([]byte, http.Header, error) {
	var raw []byte
	var header http.Header
	err := c.api().Do(ctx, http.MethodGet, target, nil, nil, client.Reply(&raw), client.ReplyHeader(&header))
	return raw, header, err
}

// send returns the JSON reply of a POST or PATCH of body to the path: nil
// for none, JSON bytes as they are, else body encoded (client.Client.Do).
func (c *apiClient) send(ctx context.Context, method, path string, body any) ([]byte, error) {
	var raw []byte
	err := c.api().Do(ctx, method, path, body, nil, client.Reply(&raw))
	return raw, err
}
