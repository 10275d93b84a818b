package apiconv

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// AdmitManagement puts the body of a management request (a POST, PATCH or
// PUT with a body: the calls that read one) through the front door: it
// takes a slot of the account's management share and grants of body bytes
// from the account's and the process's budgets, as ingest does, up to
// maxBody bytes, and cuts a body that arrives slower than the minimum
// rate. A request beyond the account's share, or beyond the bytes, is
// refused at once with Retry-After (429 for the account's share, 503 for
// sluice's), its body left unread. The handler reads the body as it reads
// any (with http.MaxBytesReader of maxBody); a cut reaches it as the
// *Error to answer. The slot and the bytes are given back when the handler
// returns, so that a body decoded and being stored still counts. It runs
// after CheckKey, whose key names the account.
//
// Every read (a GET, or a HEAD, which the same handler serves) takes a
// slot of the share too, with no bytes: a list reads up to a page of the
// account's resources from the store, and with ?filter= runs its CEL over
// them (up to filters.MaxObjectListCost a list), so that one account's
// reads at once can neither keep every core busy nor crowd the store's
// connection, which every account's key lookups share.
func (d *FrontDoor) AdmitManagement(maxBody int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isRead(r.Method) {
			t, refused := d.admission.admitManagement(RequestKey(r.Context()).AccountID, 0)
			if refused != admitted {
				d.refuse(w, r, refused)
				return
			}
			defer t.Release()
			next.ServeHTTP(w, r)
			return
		}
		if !takesBody(r.Method) || r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		t, refused := d.admission.admitManagement(RequestKey(r.Context()).AccountID, firstGrant(r.ContentLength, maxBody))
		if refused != admitted {
			d.refuse(w, r, refused)
			return
		}
		defer t.Release()
		body := &managementBody{meteredBody: d.meter(w, r, t, maxBody+1), door: d, w: w, r: r}
		body.extend()
		r.Body = body
		next.ServeHTTP(w, r)
	})
}

// managementBody is the metered body of a management request. It turns the
// front door's cuts into the API errors to answer, and lifts the read
// deadline once the body is read, so that the server's reading in the
// background (to see a client go away) does not end the request's context
// while its change is being stored.
type managementBody struct {
	*meteredBody
	door *FrontDoor
	w    http.ResponseWriter
	r    *http.Request
}

// Read reads the body; its errors are *Error for a cut.
func (b *managementBody) Read(p []byte) (int, error) {
	n, err := b.meteredBody.Read(p)
	var netErr net.Error
	switch {
	case errors.Is(err, io.EOF):
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, errRefused):
		b.door.countRefusal(b.refused)
		b.w.Header().Set("Retry-After", "1")
		DropUnread(b.w, b.r)
		return n, b.door.refusalError(b.refused)
	case errors.As(err, &netErr) && netErr.Timeout():
		b.door.refused.WithLabelValues("too_slow").Inc()
		DropUnread(b.w, b.r)
		return n, NewError(CodeBodyTooSlow, "the body arrived slower than sluice's minimum of %d bytes every %s (it had sent %d bytes); send it faster", b.windowBytes, b.window, b.read)
	}
	return n, err
}

// isRead reports whether a request of the method is a management read:
// a GET, or a HEAD, which net/http routes to the GET handler.
func isRead(method string) bool {
	return method == http.MethodGet || method == http.MethodHead
}

// takesBody reports whether a request of the method may have a body that
// its handler reads.
func takesBody(method string) bool {
	return method == http.MethodPost || method == http.MethodPatch || method == http.MethodPut
}
