package edge_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/sluicehq/sluice/edge"
	"github.com/sluicehq/sluice/internal/store"
)

// chromiumPath returns the Chromium to drive. Without one the test
// fails in CI (CI set) and skips elsewhere, as the agent inspector's
// browser test does.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, and CI is set: `make chromium` installs it")
	}
	t.Skip("chromium is not installed: `make chromium` installs it (in CI this test fails instead)")
	return ""
}

// TestOpenIDConnectInBrowser: headless Chromium asks an endpoint's page,
// goes through the provider's login (it approves at once) and the
// edge's callback, and lands on the upstream's page; the session cookie
// is out of the page's reach; a second page, which the policy keeps for
// that user, needs no login.
func TestOpenIDConnectInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	f := newLoginFixture(t)
	f.provider.QueueUser(&mockoidc.MockUser{Subject: "ann-42", Email: "ann@example.test", PreferredUsername: "ann"})
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// The endpoints' names reach the edge, as DNS would send them.
		chromedp.Flag("host-resolver-rules", "MAP *.sluice.localhost 127.0.0.1"),
		chromedp.UserDataDir(t.TempDir()),
	)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	defer cancelCtx()
	ctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()

	text := func() string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(f.endpoint.String()+"/orders?id=7")); err != nil {
		t.Fatal(err)
	}
	body := text()
	location, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	cookies, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.cookie"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(body, "upstream /orders") || location != f.endpoint.String()+"/orders?id=7" {
		t.Fatalf("landed on %s with %q, want the upstream's /orders?id=7", location, body)
	}
	if strings.Contains(cookies, "__sluice") {
		t.Fatalf("the page reads the edge's cookies: %q", cookies)
	}
	sessions, _, err := f.store.ListAppSessions(t.Context(), f.account.ID, store.Page{})
	if err != nil || len(sessions) != 1 {
		t.Fatalf("app sessions %v, %v: want one", sessions, err)
	}
	if ua := sessions[0].BrowserSession.UserAgent; !strings.Contains(ua.Raw, "Chrome") || ua.BrowserName == "" || ua.OSName != "Linux" || ua.DeviceType != "desktop" {
		t.Errorf("user agent %+v, want headless Chromium's parsed", ua)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(f.endpoint.String()+"/staff")); err != nil {
		t.Fatal(err)
	}
	body = text()
	if !strings.HasPrefix(body, "upstream /staff") {
		t.Fatalf("/staff: %q", body)
	}
	callbacks := 0
	for _, ev := range f.te.Events.OfKind(t, "http_request_complete.v0") {
		if dig(ev, "http", "request", "url", "path") == edge.LoginCallbackPath {
			callbacks++
		}
	}
	if callbacks != 1 {
		t.Fatalf("%d logins, want one: the second page needs none", callbacks)
	}
}
