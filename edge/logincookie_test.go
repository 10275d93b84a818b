package edge

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// TestLoginCookieSealing: a sealed cookie opens at its host for its
// purpose until it expires, and nowhere else; a changed byte, another
// edge secret or an over-long value do not open.
func TestLoginCookieSealing(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := newCookieSigner([]byte("secret of every edge"))
	in := loginSession{ID: "apps_1", Account: "ac_1", Config: "k", Subject: "sub", Name: "Ann", Expires: now.Add(time.Hour).Unix()}
	value, err := s.seal(purposeSession, "App.Example.test:8000", &in)
	if err != nil {
		t.Fatal(err)
	}
	var out loginSession
	if err := s.open(purposeSession, "app.example.test:8000", value, now, &out); err != nil || out != in {
		t.Fatalf("open: %v, %+v; want %+v", err, out, in)
	}
	payload, sig, _ := strings.Cut(value, ".")
	flipped := []byte(payload)
	flipped[3] ^= 1
	for _, c := range []struct {
		name, purpose, host, value string
		signer                     cookieSigner
		at                         time.Time
		want                       error
	}{
		{"other host", purposeSession, "other.example.test:8000", value, s, now, errCookieForged},
		{"other purpose", purposeState, "app.example.test:8000", value, s, now, errCookieForged},
		{"other secret", purposeSession, "app.example.test:8000", value, newCookieSigner([]byte("another")), now, errCookieForged},
		{"changed payload", purposeSession, "app.example.test:8000", string(flipped) + "." + sig, s, now, errCookieForged},
		{"no signature", purposeSession, "app.example.test:8000", payload, s, now, errCookieForged},
		{"too long", purposeSession, "app.example.test:8000", value + strings.Repeat("A", maxCookieValue), s, now, errCookieForged},
		{"expired", purposeSession, "app.example.test:8000", value, s, now.Add(time.Hour), errCookieExpired},
	} {
		if err := c.signer.open(c.purpose, c.host, c.value, c.at, &out); !errors.Is(err, c.want) {
			t.Errorf("%s: open: %v, want %v", c.name, err, c.want)
		}
	}
	huge := in
	huge.Name = strings.Repeat("x", maxCookieValue)
	if _, err := s.seal(purposeSession, "app.example.test", &huge); err == nil {
		t.Fatal("sealed a cookie longer than browsers keep")
	}
}

// TestPendingLogins: a browser holds at most maxPendingLogins login
// states; a new login takes a free slot, or the one that expires first.
func TestPendingLogins(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := newCookieSigner([]byte("k"))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if got := s.stateCookieName(r, "h", now); got != stateCookiePrefix+"0" {
		t.Fatalf("first login in %s", got)
	}
	for i, expires := range []time.Duration{5 * time.Minute, 2 * time.Minute, 7 * time.Minute} {
		v, err := s.seal(purposeState, "h", &loginState{State: string(rune('a' + i)), Expires: now.Add(expires).Unix()})
		if err != nil {
			t.Fatal(err)
		}
		name := s.stateCookieName(r, "h", now)
		if want := stateCookiePrefix + string(rune('0'+i)); name != want {
			t.Fatalf("login %d in %s, want %s", i, name, want)
		}
		r.AddCookie(&http.Cookie{Name: name, Value: v})
	}
	if got := s.stateCookieName(r, "h", now); got != stateCookiePrefix+"1" {
		t.Fatalf("a fourth login replaces %s, want the one expiring first (%s1)", got, stateCookiePrefix)
	}
	states, names := s.pendingLogins(r, "h", now)
	if len(states) != 3 || len(names) != 3 {
		t.Fatalf("pending %v (%v)", states, names)
	}
	if states, _ := s.pendingLogins(r, "other-host", now); len(states) != 0 {
		t.Fatalf("another host's pending logins: %v", states)
	}
}

// TestReturnPath: a browser goes back to a path of the same host only.
func TestReturnPath(t *testing.T) {
	for uri, want := range map[string]string{
		"/orders?id=7":                     "/orders?id=7",
		"//evil.example/x":                 "/",
		"/\\evil.example":                  "/",
		"/./\\evil.example":                "/",
		"https://evil.example/":            "/",
		"":                                 "/",
		LoginCallbackPath + "?state=x":     "/",
		"/" + strings.Repeat("a", 3000):    "/",
		"/a\nb":                            "/",
		"/search?q=%2F%2Fevil.example.com": "/search?q=%2F%2Fevil.example.com",
	} {
		if got := returnPath(uri); got != want {
			t.Errorf("returnPath(%q) = %q, want %q", uri, got, want)
		}
	}
}

// TestSessionCache: a session read once goes on without the store; its
// refresh is due to one request a minute; an end, even one reported
// while the store was being read, logs its user out.
func TestSessionCache(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := newSessionCache()
	if got := c.check("a/1", now); got != sessionUnknown {
		t.Fatalf("unseen: %v", got)
	}
	if got := c.put("a/1", now.Add(time.Hour), now.Add(-10*time.Second), now); got != sessionLive {
		t.Fatalf("put, active 10s ago: %v", got)
	}
	if got := c.check("a/1", now.Add(30*time.Second)); got != sessionLive {
		t.Fatalf("30s later: %v", got)
	}
	if got := c.check("a/1", now.Add(51*time.Second)); got != sessionRefresh {
		t.Fatalf("a minute after last_active: %v, want a refresh", got)
	}
	if got := c.check("a/1", now.Add(52*time.Second)); got != sessionLive {
		t.Fatalf("a second after the refresh: %v, want live (one request refreshes)", got)
	}
	if got := c.check("a/1", now.Add(2*time.Hour)); got != sessionUnknown {
		t.Fatalf("past its end: %v, want the store read again", got)
	}
	c.put("a/1", now.Add(time.Hour), now, now)
	c.forget()
	if got := c.check("a/1", now); got != sessionUnknown {
		t.Fatalf("forgotten: %v", got)
	}
	c.put("a/1", now.Add(time.Hour), now, now)
	c.end("a/1")
	if got := c.check("a/1", now); got != sessionEnded {
		t.Fatalf("ended: %v", got)
	}
	if got := c.put("a/1", now.Add(time.Hour), now, now); got != sessionEnded {
		t.Fatalf("a read that raced the end: %v, want ended", got)
	}
}

// TestStripLoginCookies: the upstream gets the request's cookies but the
// edge's.
func TestStripLoginCookies(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Cookie", "theme=dark; "+sessionCookiePrefix+"ab=x.y; "+stateCookiePrefix+"0=z; cart=3")
	stripLoginCookies(r)
	if got := r.Header.Get("Cookie"); got != "theme=dark; cart=3" {
		t.Fatalf("Cookie %q", got)
	}
}

// TestParseUserAgent: browsers, systems and device types of common user
// agents, and the store's bounds on a hostile one.
func TestParseUserAgent(t *testing.T) {
	for raw, want := range map[string]store.UserAgent{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36": {
			BrowserName: "Chrome", BrowserVersion: "131.0.0.0", DeviceType: deviceDesktop, OSName: "Windows", OSVersion: "10"},
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1": {
			BrowserName: "Safari", BrowserVersion: "17.5", DeviceType: deviceMobile, OSName: "iOS", OSVersion: "17.5"},
		"Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1": {
			BrowserName: "Safari", BrowserVersion: "17.5", DeviceType: deviceTablet, OSName: "iOS", OSVersion: "17.5"},
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)": {
			BrowserName: "Googlebot", BrowserVersion: "2.1", DeviceType: deviceBot},
	} {
		got := parseUserAgent(raw)
		want.Raw = raw
		if got != want {
			t.Errorf("parseUserAgent(%q)\n = %+v\nwant %+v", raw, got, want)
		}
	}
	hostile := parseUserAgent(strings.Repeat("é", 2000) + "\x00\n")
	if len(hostile.Raw) > store.MaxUserAgent || strings.ContainsAny(hostile.Raw, "\x00\n") {
		t.Fatalf("a hostile user agent kept as %d bytes", len(hostile.Raw))
	}
}

// TestDropLoginSetCookies: an upstream's answer cannot set the edge's
// login cookies; its own cookies pass.
func TestDropLoginSetCookies(t *testing.T) {
	h := http.Header{"Set-Cookie": {
		"app=1; Path=/",
		"__sluice_session_abc=forged; Domain=example.test",
		" __sluice_login_0=planted",
		"other=2",
	}}
	dropLoginSetCookies(h)
	if got := h.Values("Set-Cookie"); len(got) != 2 || got[0] != "app=1; Path=/" || got[1] != "other=2" {
		t.Fatalf("kept %q", got)
	}
	only := http.Header{"Set-Cookie": {"__sluice_session_x=y"}}
	if dropLoginSetCookies(only); only.Get("Set-Cookie") != "" {
		t.Fatalf("kept %q", only.Values("Set-Cookie"))
	}
}
