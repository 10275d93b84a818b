package sinks_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/sinks"
)

// TestSDKClosesBodyAfterAnswer stages, without timing, the order of events
// of aws/aws-sdk-go-v2#2737: the server has read the whole PutRecords body
// and answered, the SDK has closed the request body on the answer's
// headers, and only then does the transport's write loop make its last
// read of the body (net/http reads a body past its Content-Length to check
// that it ends). smithy-go's closed body answers that read with io.EOF as
// an error, so the transport fails the write and closes the connection
// under the answer being read: the call fails although the service has
// every record, and sluice, which turns the SDK's retries off, would send
// the batch again. The test holds the transport's last write of the body
// until the SDK starts reading the answer's body, then lets it go on.
func TestSDKClosesBodyAfterAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		client   func(dial func(context.Context, string, string) (net.Conn, error)) aws.HTTPClient
		wantFail bool
	}{
		{"the SDK's client", func(dial func(context.Context, string, string) (net.Conn, error)) aws.HTTPClient {
			return sdkClient(dial)
		}, true},
		{"BodyCopyingHTTPClient", func(dial func(context.Context, string, string) (net.Conn, error)) aws.HTTPClient {
			return sinks.BodyCopyingHTTPClient(sdkClient(dial))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wrote := make(chan error, 1)
			server := newAnsweringServer(t, wrote)
			conns := make(chan *heldConn, 1)
			dial := func(ctx context.Context, network, address string) (net.Conn, error) {
				var d net.Dialer
				conn, err := d.DialContext(ctx, network, address)
				if err != nil {
					return nil, err
				}
				held := newHeldConn(conn)
				conns <- held
				return held, nil
			}
			client := kinesis.New(kinesis.Options{
				Region:       "us-east-1",
				BaseEndpoint: aws.String("http://" + server.addr),
				Credentials:  credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
				HTTPClient:   tc.client(dial),
				Retryer:      aws.NopRetryer{},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
				WroteRequest: func(info httptrace.WroteRequestInfo) { wrote <- info.Err },
			})
			records := make([]types.PutRecordsRequestEntry, 500)
			for i := range records {
				records[i] = types.PutRecordsRequestEntry{
					Data:         bytes.Repeat([]byte{'x'}, 1000),
					PartitionKey: aws.String(strconv.Itoa(i)),
				}
			}
			_, err := client.PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String("s"), Records: records})
			staged := <-conns
			staged.release()
			if !staged.wasHeld() {
				t.Fatal("the transport's last write of the body was not held until the SDK read the answer: the order was not staged")
			}
			if got := <-server.bodyBytes; got == 0 {
				t.Fatal("the server did not read the request body")
			}
			if tc.wantFail && err == nil {
				t.Fatal("PutRecords succeeded; the SDK's client no longer fails when it closes the body before the transport's last read")
			}
			if !tc.wantFail && err != nil {
				t.Fatalf("PutRecords: %v", err)
			}
			t.Logf("PutRecords after the server read the whole body: %v", err)
		})
	}
}

func sdkClient(dial func(context.Context, string, string) (net.Conn, error)) aws.HTTPClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.DialContext = dial
	})
}

// answeringServer reads one whole request, sends the answer's headers, and
// sends its body once the client has finished writing the request; when the
// client's write failed, the client closes the connection and the server
// sends nothing more.
type answeringServer struct {
	addr      string
	wrote     <-chan error
	bodyBytes chan int
}

func newAnsweringServer(t *testing.T, wrote <-chan error) *answeringServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &answeringServer{addr: ln.Addr().String(), wrote: wrote, bodyBytes: make(chan int, 1)}
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			s.bodyBytes <- 0
			return
		}
		defer conn.Close()
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			s.bodyBytes <- 0
			return
		}
		body, _ := io.ReadAll(req.Body)
		s.bodyBytes <- len(body)
		const answer = `{"FailedRecordCount":0,"Records":[]}`
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: %d\r\n\r\n", len(answer))
		if err := <-s.wrote; err != nil {
			_, _ = io.Copy(io.Discard, conn) // until the client closes
			return
		}
		_, _ = io.WriteString(conn, answer)
	}()
	return s
}

// heldConn is a client connection whose write completing the request
// (headers and Content-Length bytes of body) returns only once a read is
// made after the answer's headers arrived: the SDK reading the answer's
// body, after it returned from the HTTP client and closed the request body.
type heldConn struct {
	net.Conn

	// written by the transport's write loop
	head    bytes.Buffer
	total   int
	written int
	held    bool

	// read by the transport's read loop, then by the SDK
	received bytes.Buffer

	answerRead chan struct{}
	holding    chan struct{}
	closed     chan struct{}
	once       sync.Once
	closeOnce  sync.Once
	mu         sync.Mutex
	wasHeldSet bool
}

func newHeldConn(conn net.Conn) *heldConn {
	return &heldConn{Conn: conn, total: -1, answerRead: make(chan struct{}), holding: make(chan struct{}), closed: make(chan struct{})}
}

func (c *heldConn) release() { c.once.Do(func() { close(c.answerRead) }) }

func (c *heldConn) wasHeld() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wasHeldSet
}

func (c *heldConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written += n
	if c.total < 0 {
		c.head.Write(p[:n])
		if end := bytes.Index(c.head.Bytes(), []byte("\r\n\r\n")); end >= 0 {
			req, perr := http.ReadRequest(bufio.NewReader(strings.NewReader(c.head.String()[:end+4])))
			if perr == nil {
				c.total = end + 4 + int(req.ContentLength)
			}
		}
	}
	if err == nil && !c.held && c.total >= 0 && c.written >= c.total {
		c.held = true
		close(c.holding)
		select {
		case <-c.answerRead:
		case <-c.closed:
		}
	}
	return n, err
}

func (c *heldConn) Read(p []byte) (int, error) {
	if bytes.Contains(c.received.Bytes(), []byte("\r\n\r\n")) {
		select {
		case <-c.holding: // the whole request is written; the last write waits
			c.mu.Lock()
			c.wasHeldSet = true
			c.mu.Unlock()
		case <-c.answerRead:
		case <-c.closed:
		}
		c.release()
	}
	n, err := c.Conn.Read(p)
	c.received.Write(p[:n])
	return n, err
}

// Close closes the connection and lets a held write or read go on, as when
// the transport gives up on the request.
func (c *heldConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
