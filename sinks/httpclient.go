package sinks

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// BodyCopyingHTTPClient returns an HTTP client that sends each request from
// its own copy of the body, through client.
//
// The SDK (smithy-go) closes a request's body as soon as the answer's
// headers arrive, and its closed body answers the transport's last read
// (net/http reads past the Content-Length to check that the body ends)
// with io.EOF as an error: when that read comes after the answer, the
// transport closes the connection under the answer being read, and the
// call fails with "use of closed network connection" although the service
// stored its records (aws/aws-sdk-go-v2#2737). The SDK's fix (#2949) is to
// retry that error; sluice turns the SDK's retries off, so such a failure
// would send the whole batch again: duplicates. With a copy, it cannot
// happen. TestSDKClosesBodyAfterAnswer stages the order of events with the
// SDK's own client (aws-sdk-go-v2 v1.47.7, smithy-go v1.28.8) and shows the
// call failing without the copy. The bodies of sluice's calls are at most
// a few MiB, already in memory; the copy is one slice of the request's
// Content-Length. As the transport reads only the copy, the sinks reuse the
// memory of a body (sinks/awsjson.Buffers) as soon as the SDK's call
// returns, even when the transport is still writing the request then.
func BodyCopyingHTTPClient(client aws.HTTPClient) aws.HTTPClient {
	return bodyCopyingClient{client: client}
}

type bodyCopyingClient struct{ client aws.HTTPClient }

// Do sends req with a copy of its body.
func (c bodyCopyingClient) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		body, err := copyBody(req.Body, req.ContentLength)
		if err != nil {
			return nil, fmt.Errorf("copying the request body: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return c.client.Do(req)
}

// copyBody returns the bytes of body, read into one slice of length bytes
// when length is known (positive: net/http takes 0 with a body as
// unknown), as the SDK knows it for the bodies of sluice's calls.
func copyBody(body io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(body)
	}
	copied := make([]byte, length)
	if _, err := io.ReadFull(body, copied); err != nil {
		return nil, err
	}
	var more [1]byte
	if n, err := body.Read(more[:]); n > 0 || (err != nil && err != io.EOF) {
		return nil, fmt.Errorf("the body is longer than its Content-Length of %d bytes", length)
	}
	return copied, nil
}
