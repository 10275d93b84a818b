package sinks

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluicehq/sluice/sinks/awsjson"
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
// Content-Length, in a buffer from the client's pool. As the transport
// reads only the copy, the sinks reuse the memory of a body
// (sinks/awsjson.Buffers) as soon as the SDK's call returns, even when the
// transport is still writing the request then.
//
// Do sends a shallow copy of the request with the copy as its body, which
// only the transport closes. The copy goes back to the pool once nothing
// can read it any more: Do holds it until it returns, and each body handed
// to the transport (the request's, and each one GetBody makes for a
// transport's retry) until its first Close, which net/http's transport
// always makes, maybe after Do returned. A body read after its Close fails,
// without reading the buffer, and GetBody fails once Do returned and every
// body was closed. A copy of more than 8 MiB is not pooled, nor one whose
// body the client never closes (it is left to the garbage collector).
func BodyCopyingHTTPClient(client aws.HTTPClient) aws.HTTPClient {
	return bodyCopyingClient{client: client, copies: &copyPool{maxKept: maxKeptCopy}}
}

// maxKeptCopy is the largest copy the pool keeps: more than the largest
// body of sluice's calls (Kinesis' 5 MiB of records, in base64).
const maxKeptCopy = 8 << 20

type bodyCopyingClient struct {
	client aws.HTTPClient
	copies *copyPool
}

// Do sends req with a copy of its body.
func (c bodyCopyingClient) Do(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return c.client.Do(req)
	}
	copied, err := c.copies.copyBody(req.Body, req.ContentLength)
	if err != nil {
		return nil, fmt.Errorf("copying the request body: %w", err)
	}
	defer copied.release()
	// A shallow copy of req, as net/http makes of a request it sends: the
	// SDK closes the body of its req once Do returns, and only the
	// transport may close the copy's.
	sent := *req
	sent.Body, _ = copied.open() // Do holds the copy: open cannot fail
	sent.GetBody = copied.open
	return c.client.Do(&sent)
}

// copyPool is a pool of the buffers of bodies' copies.
type copyPool struct {
	pool    sync.Pool
	maxKept int // the largest capacity kept
}

// get returns an empty buffer.
func (p *copyPool) get() *[]byte {
	if buf, ok := p.pool.Get().(*[]byte); ok {
		return buf
	}
	return new([]byte)
}

// put returns buf to the pool, and reports whether it was kept: not when
// larger than maxKept.
func (p *copyPool) put(buf *[]byte) bool {
	if cap(*buf) > p.maxKept {
		return false
	}
	*buf = (*buf)[:0]
	p.pool.Put(buf)
	return true
}

// copyBody returns a copy of body, read into one buffer of length bytes
// when length is known (positive: net/http takes 0 with a body as
// unknown), as the SDK knows it for the bodies of sluice's calls. The
// caller holds the copy, and releases it.
func (p *copyPool) copyBody(body io.Reader, length int64) (*bodyCopy, error) {
	buf := p.get()
	data, err := readBody((*buf)[:0], body, length)
	if err != nil {
		p.put(buf)
		return nil, err
	}
	*buf = data
	return &bodyCopy{buf: buf, pool: p, holders: 1}, nil
}

// readBody appends the bytes of body to dst, length bytes when length is
// positive.
func readBody(dst []byte, body io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return awsjson.ReadAll(dst, body)
	}
	dst = slices.Grow(dst, int(length))[:length]
	if _, err := io.ReadFull(body, dst); err != nil {
		return nil, err
	}
	var more [1]byte
	if n, err := body.Read(more[:]); n > 0 || (err != nil && err != io.EOF) {
		return nil, fmt.Errorf("the body is longer than its Content-Length of %d bytes", length)
	}
	return dst, nil
}

// errCopyReleased is the error of GetBody after Do returned and every body
// of the copy was closed.
var errCopyReleased = errors.New("the request body's copy is released: GetBody called after Do returned")

// errCopyClosed is the error of a body's Read after its Close.
var errCopyClosed = errors.New("read of a request body after its Close")

// bodyCopy is the copy of a request's body, in a buffer of pool until its
// last holder releases it.
type bodyCopy struct {
	pool *copyPool

	mu      sync.Mutex
	buf     *[]byte // nil once released
	holders int
}

// open returns a new body reading the copy, which holds it until its
// Close, or errCopyReleased when the copy was released.
func (c *bodyCopy) open() (io.ReadCloser, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holders == 0 {
		return nil, errCopyReleased
	}
	c.holders++
	return &copyReader{copy: c, rest: *c.buf}, nil
}

// release ends a hold of the copy; the last gives the buffer back to the
// pool.
func (c *bodyCopy) release() {
	c.mu.Lock()
	c.holders--
	var buf *[]byte
	if c.holders == 0 {
		buf, c.buf = c.buf, nil
	}
	c.mu.Unlock()
	if buf != nil {
		c.pool.put(buf)
	}
}

// copyReader is one body reading a copy. It has no WriteTo, so that every
// read of the buffer is one of its Reads, under its lock: a Close that
// releases the copy waits for a Read under way.
type copyReader struct {
	copy *bodyCopy

	mu     sync.Mutex
	rest   []byte // not read yet
	closed bool
}

// Read reads the copy, or fails with errCopyClosed after Close.
func (r *copyReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, errCopyClosed
	}
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// Close releases the reader's hold of the copy, once.
func (r *copyReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed, r.rest = true, nil
	r.copy.release()
	return nil
}
