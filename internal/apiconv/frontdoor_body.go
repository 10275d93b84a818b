package apiconv

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Grants of body bytes. A body whose length is known is granted it at
// once (and one byte more, to read its end); any other starts with
// minBodyGrant and doubles its grant, up to maxBodyGrant at a time, as it
// arrives.
const (
	minBodyGrant = 64 << 10
	maxBodyGrant = 1 << 20
)

// initialBodyBuffer bounds the buffer ReadBody sets aside before the body
// arrives: a Content-Length is a promise, and a client sending slowly (or
// never) must not make sluice hold its whole size meanwhile.
const initialBodyBuffer = 1 << 20

// firstGrant is the bytes admission grants a body of the Content-Length
// (-1: unknown) when its request is admitted.
func firstGrant(contentLength, maxBody int64) int64 {
	if contentLength >= 0 {
		return min(contentLength, maxBody) + 1
	}
	return minBodyGrant
}

// errRefused ends the reading of a body whose ticket could not grow.
var errRefused = errors.New("the body is over its share of the bytes in flight")

// meteredBody reads a request body within the bytes its ticket is granted,
// asking for more as they are used up, and keeps the connection's read
// deadline one window ahead as long as each window brings windowBytes: a
// body that arrives slower is cut when a window passes without them.
type meteredBody struct {
	body   io.ReadCloser
	ticket *Ticket
	limit  int64 // the most bytes to grant in all: the body limit and one
	read   int64
	// refused is why the ticket could not grow, once Read returned
	// errRefused.
	refused refusal

	rc          *http.ResponseController
	window      time.Duration
	windowBytes int64
	mark        int64 // bytes read when the current window started
}

// Read reads into p no more bytes than the ticket grants, growing the grant
// when it is used up.
func (b *meteredBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.read == b.ticket.bytes {
		n := min(max(b.ticket.bytes, minBodyGrant), maxBodyGrant, b.limit-b.ticket.bytes)
		if n <= 0 {
			return 0, errors.New("reading past the body limit")
		}
		if r := b.ticket.grow(n); r != admitted {
			b.refused = r
			return 0, errRefused
		}
	}
	p = p[:min(int64(len(p)), b.ticket.bytes-b.read)]
	n, err := b.body.Read(p)
	b.read += int64(n)
	if b.read-b.mark >= b.windowBytes {
		b.mark = b.read
		b.extend()
	}
	return n, err
}

// Close closes the body.
func (b *meteredBody) Close() error { return b.body.Close() }

// extend sets the connection's read deadline one window from now. A
// connection that cannot take deadlines keeps the server's ReadTimeout.
func (b *meteredBody) extend() {
	_ = b.rc.SetReadDeadline(time.Now().Add(b.window))
}

// meter returns the body of r metered by the ticket, to be granted limit
// bytes in all, at most, and cut below the minimum rate. Call its extend
// to start its first window.
func (d *FrontDoor) meter(w http.ResponseWriter, r *http.Request, t *Ticket, limit int64) *meteredBody {
	return &meteredBody{
		body:        r.Body,
		ticket:      t,
		limit:       limit,
		rc:          http.NewResponseController(w),
		window:      d.cfg.BodyRateWindow,
		windowBytes: max(1, int64(float64(d.cfg.MinBodyRate)*d.cfg.BodyRateWindow.Seconds())),
	}
}

// ReadBody reads the whole body of an ingest request that Admit let in,
// up to DoorConfig.MaxBodyBytes, within the bytes its ticket can grow to and
// at the minimum rate. It returns the error to answer otherwise: a body
// beyond the bytes in flight (429 or 503, with Retry-After), too slow
// (408), too large (413), or cut short or unreadable (400).
func (d *FrontDoor) ReadBody(w http.ResponseWriter, r *http.Request, t *Ticket) ([]byte, *Error) {
	metered := d.meter(w, r, t, d.cfg.MaxBodyBytes+1)
	metered.extend()
	// Once the body is read, no deadline: the server's reading in the
	// background (to see a client go away) must not end the request's
	// context while its events are being stored.
	defer func() { _ = metered.rc.SetReadDeadline(time.Time{}) }()
	body, err := readAll(http.MaxBytesReader(w, metered, d.cfg.MaxBodyBytes), r.ContentLength)
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.Is(err, errRefused):
		d.countRefusal(metered.refused)
		w.Header().Set("Retry-After", "1")
		DropUnread(w, r)
		return nil, d.refusalError(metered.refused)
	case errors.As(err, &tooLarge):
		return nil, d.BodyTooLarge()
	case errors.As(err, &netErr) && netErr.Timeout():
		d.refused.WithLabelValues("too_slow").Inc()
		DropUnread(w, r)
		return nil, NewError(CodeBodyTooSlow, "the body arrived slower than sluice's minimum of %d bytes every %s (it had sent %d bytes); send it faster, or split the events into smaller requests", metered.windowBytes, d.cfg.BodyRateWindow, len(body))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, NewError(CodeMalformedBody, "the body ended after %d bytes, before its Content-Length of %d; send the whole body", len(body), r.ContentLength)
	case err != nil:
		return nil, NewError(CodeMalformedBody, "reading the body: %v", err)
	}
	return body, nil
}

// readAll reads r to its end. A size hint (the Content-Length, -1 for
// none) sizes the buffer once the first initialBodyBuffer bytes have come,
// so that a body of known length is held in one buffer of its size, not in
// one of up to twice it.
func readAll(r io.Reader, sizeHint int64) ([]byte, error) {
	size := int64(bytes.MinRead)
	if sizeHint >= 0 {
		size = min(sizeHint+1, initialBodyBuffer)
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			next := 2 * int64(cap(buf))
			if sizeHint >= int64(len(buf)) {
				next = min(next, sizeHint+1)
			}
			buf = slices.Grow(buf, int(next)-len(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// refuse answers a request admission refused, with Retry-After.
func (d *FrontDoor) refuse(w http.ResponseWriter, r *http.Request, why refusal) {
	d.countRefusal(why)
	w.Header().Set("Retry-After", "1")
	DropUnread(w, r)
	WriteError(w, r, d.refusalError(why))
}

// DropUnread has the server close the connection after the answer, instead
// of reading what is left of the body first (up to 256 KiB, for as long as
// the client takes): a refused body is not read any further. Over HTTP/2,
// where the stream's reset drops the body and a Connection header would
// take down the client's other streams, it does nothing.
func DropUnread(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
}

func (d *FrontDoor) countRefusal(why refusal) {
	d.refused.WithLabelValues(why.metricReason()).Inc()
}

// refusalError is the API error of a refusal of admission.
func (d *FrontDoor) refusalError(why refusal) *Error {
	switch why {
	case refusedRequests:
		return NewError(CodeBusy, "sluice has %d ingest requests in flight, as many as it takes at once; retry after Retry-After seconds", d.cfg.MaxInFlight)
	case refusedBytes:
		return NewError(CodeBusy, "the bodies of the requests in flight (ingest and management) hold sluice's whole budget of %s; retry after Retry-After seconds", sizeText(d.cfg.MaxBytesInFlight))
	case refusedAccountRequests:
		return NewError(CodeAccountBusy, "your account has %d ingest requests in flight, its share; wait for one to finish and retry after Retry-After seconds, or send fewer requests at once", d.cfg.MaxAccountInFlight)
	case refusedAccountManagement:
		return NewError(CodeAccountBusy, "your account has %d management requests in flight (reads and changes), its share; wait for one to finish and retry after Retry-After seconds, or send fewer requests at once", d.cfg.MaxAccountManagementInFlight)
	}
	return NewError(CodeAccountBytes, "the bodies of your account's requests in flight (ingest and management) hold its share of %s; retry after Retry-After seconds, or send fewer or smaller requests at once", sizeText(d.cfg.MaxAccountBytesInFlight))
}

// sizeText writes a byte count for people: "41943040 bytes (40 MiB)".
func sizeText(n int64) string {
	return strconv.FormatInt(n, 10) + " bytes (" + strconv.FormatInt(n>>20, 10) + " MiB)"
}
