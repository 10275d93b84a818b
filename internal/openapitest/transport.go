package openapitest

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Transport returns a RoundTripper that sends requests with base (or
// http.DefaultTransport when base is nil) and checks every exchange with
// Check, reporting to t. It reads each request and response body whole
// before passing it on, so callers still read the bodies as usual; that
// also means it does not suit streams without an end.
func (v *Validator) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &checkingTransport{validator: v, t: t, base: base}
}

// checkingTransport is the RoundTripper of Validator.Transport.
type checkingTransport struct {
	validator *Validator
	t         testing.TB
	base      http.RoundTripper
}

// RoundTrip sends req with the base transport, then checks the exchange.
func (c *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		reqBody, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		// The clone gets the buffered body; req itself is not changed,
		// as a RoundTripper must not.
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(reqBody)), nil }
	}
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	c.validator.Check(c.t, req, reqBody, resp, respBody)
	return resp, nil
}
