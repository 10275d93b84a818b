package localapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
)

// xssPath is a request path that is markup: the inspector must show it
// as text.
const xssPath = "/search<img/src=x/onerror=window.__pwned=1>"

// chromiumPath returns the Chromium to drive. Without one the test
// fails in CI (CI set) and skips elsewhere.
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

// browserFixture is the local API on 127.0.0.1 with a tunnel "web"
// whose forwarding captures into the Captures and proxies to an
// upstream; its Backend's Replay runs a request through that forwarding.
type browserFixture struct {
	api      *httptest.Server
	front    *httptest.Server
	captures *Captures
}

func newBrowserFixture(t *testing.T) *browserFixture {
	t.Helper()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Upstream", "hello-header")
		switch {
		case r.URL.Path == "/logo.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10"))
		case r.Method == "POST":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"created":true,"echo":%q}`, body)
		case strings.HasPrefix(r.URL.Path, "/missing"):
			http.NotFound(w, r)
		default:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintf(w, "upstream body for %s", r.URL.Path)
		}
	}))
	t.Cleanup(upstream.Close)
	target, err := url.Parse(upstream.URL)
	if err != nil {
		t.Fatal(err)
	}

	captures := NewCaptures(CapturesConfig{})
	forward := captures.Capturing("web", httputil.NewSingleHostReverseProxy(target))
	front := httptest.NewServer(forward)
	t.Cleanup(front.Close)

	backend := &fakeBackend{
		tunnels: []Tunnel{{
			Name: "web", PublicURL: "https://web.example.test", Proto: "https",
			Config: agentconfig.Tunnel{Name: "web", Proto: "http", Addr: upstream.URL, Inspect: true},
			Meter:  NewMeter(nil),
		}, {
			Name: "shop", ID: "ep_1", Proto: "labeled",
			Config: agentconfig.Tunnel{Name: "shop", Proto: "labeled", Labels: map[string]string{"team": "web", "edge": "shop"}, Addr: upstream.URL, Inspect: true},
			Meter:  NewMeter(nil),
		}},
		status: Status{State: "online", Edge: "edge.example.test:443", Latency: 23 * time.Millisecond,
			SessionID: "ts_1", AgentVersion: "0.1.0", ConnectedAt: time.Now()},
	}
	backend.replay = func(ctx context.Context, tunnelName string, req *http.Request) error {
		if tunnelName != "web" {
			return ErrNoTunnel
		}
		rec := httptest.NewRecorder()
		forward.ServeHTTP(rec, req)
		return nil
	}
	srv := New(Config{Backend: backend, Captures: captures, DecodeTunnel: decodeTestTunnel,
		Version: "0.1.0", Logger: slog.New(slog.DiscardHandler)})
	api := httptest.NewServer(srv.Handler())
	t.Cleanup(api.Close)
	return &browserFixture{api: api, front: front, captures: captures}
}

// send sends a request through the tunnel's forwarding and waits for
// its capture.
func (f *browserFixture) send(t *testing.T, method, path, body string) *Capture {
	t.Helper()
	sub := f.captures.Subscribe()
	defer sub.Cancel()
	req := mustRequest(t, method, f.front.URL+path, strings.NewReader(body))
	req.Header.Set("User-Agent", "sluice-test/1.0")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	do(t, req)
	return nextCapture(t, f.captures, sub)
}

// sendRaw sends a request line the Go client would escape, as is.
func (f *browserFixture) sendRaw(t *testing.T, requestLine string) *Capture {
	t.Helper()
	sub := f.captures.Subscribe()
	defer sub.Cancel()
	conn, err := net.Dial("tcp", f.front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s\r\nHost: web.example.test\r\nX-Note: <b>bold?</b>\r\nConnection: close\r\n\r\n", requestLine)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return nextCapture(t, f.captures, sub)
}

// pageErrors collects what the page reports as errors: uncaught
// exceptions, console errors and browser log errors (CSP violations
// among them).
type pageErrors struct {
	mu   sync.Mutex
	list []string
	done chan struct{}
}

// watch collects the errors of ctx's page until ctx ends.
func watchPageErrors(ctx context.Context) *pageErrors {
	p := &pageErrors{done: make(chan struct{})}
	messages := chromedp.Console(ctx)
	go func() {
		defer close(p.done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				p.mu.Lock()
				p.list = append(p.list, m.String()+" "+m.URL)
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *pageErrors) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.list {
		t.Errorf("the page reported %s", e)
	}
}

// screenshot writes a PNG of the viewport into dir and, when set, into
// SLUICE_SCREENSHOTS_DIR.
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	// Two animation frames: what the page just changed is painted.
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("screenshot %s: waiting for a paint: %v", name, err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dirs := []string{dir}
	if extra := os.Getenv("SLUICE_SCREENSHOTS_DIR"); extra != "" {
		if err := os.MkdirAll(extra, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, extra)
	}
	for _, d := range dirs {
		path := filepath.Join(d, name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
}

func TestInspectorInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	f := newBrowserFixture(t)
	f.send(t, "GET", "/missing/page", "")
	f.send(t, "GET", "/logo.png", "")
	xss := f.sendRaw(t, "GET "+xssPath+" HTTP/1.1")
	posted := f.send(t, "POST", "/api/orders?source=test", `{"item":"tea","qty":2}`)
	for i := range 3 {
		f.send(t, "GET", fmt.Sprintf("/assets/app-%d.js", i), "")
	}
	rowsBefore := len(f.captures.List(maxListLimit, ""))

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	defer cancelCtx()
	ctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	errs := watchPageErrors(ctx)

	dir := t.TempDir()
	within := chromedp.WithPollingTimeout(10 * time.Second)
	rows := func(want string) chromedp.Action[bool] {
		return chromedp.Poll[bool](fmt.Sprintf("document.querySelectorAll('.row').length %s", want), within)
	}
	until := func(expr string) chromedp.Action[bool] { return chromedp.Poll[bool](expr, within) }
	row := func(id string) chromedp.CSS { return chromedp.CSS(fmt.Sprintf(`.row[data-id=%q]`, id)) }
	void := func(a chromedp.Action[bool]) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
			_, err := a(ctx, t)
			return chromedp.Void{}, err
		}
	}
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	eval := func(expr string) bool {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}

	t.Run("lists the captures", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.EmulateViewport(1280, 800),
			chromedp.Navigate(f.api.URL+"/"),
			void(rows(fmt.Sprintf("=== %d", rowsBefore))),
			void(until(`document.getElementById('state').textContent === 'online'`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		if got := text(".row .path"); got != "/assets/app-2.js" {
			t.Errorf("first row's path %q, want the newest, /assets/app-2.js", got)
		}
	})

	t.Run("lists a labeled tunnel by its labels", func(t *testing.T) {
		if err := chromedp.Do(ctx, void(until(`document.querySelectorAll('#tunnels .tunnel').length === 2`))); err != nil {
			t.Fatal(err)
		}
		if got := text("#tunnels .tunnel:nth-child(2) .url"); got != "edge=shop, team=web" {
			t.Errorf("the labeled tunnel's line shows %q, want its labels", got)
		}
	})

	t.Run("shows markup as text", func(t *testing.T) {
		if got := text(row(xss.ID) + " .path"); got != xssPath {
			t.Errorf("path shown %q, want %q", got, xssPath)
		}
		err := chromedp.Do(ctx,
			chromedp.Click(row(xss.ID)),
			void(until(`(document.querySelector('.detail-head .title') || {}).textContent === 'GET ' + `+fmt.Sprintf("%q", xssPath))),
		)
		if err != nil {
			t.Fatal(err)
		}
		if eval(`document.querySelectorAll('img, b').length > 0`) || eval(`window.__pwned === 1`) {
			t.Fatal("captured markup became elements of the page")
		}
		if !strings.Contains(text("#detail"), "<b>bold?</b>") {
			t.Error("the header of markup is not shown as text")
		}
	})

	t.Run("shows a request in detail", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Click(row(posted.ID)),
			void(until(`document.getElementById('detail').textContent.includes('"created": true')`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		detail := text("#detail")
		for _, want := range []string{"POST /api/orders?source=test", "hello-header", "sluice-test/1.0", `"item": "tea"`, `"created": true`, "201 Created"} {
			if !strings.Contains(detail, want) {
				t.Errorf("the detail lacks %q:\n%s", want, detail)
			}
		}
		screenshot(t, ctx, dir, "inspector-1280x800.png")
	})

	t.Run("replays", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS("#replay")),
			void(rows(fmt.Sprintf("=== %d", rowsBefore+1))),
		)
		if err != nil {
			t.Fatal(err)
		}
		if got := text(".row .path"); got != "/api/orders?source=test" {
			t.Errorf("newest row %q, want the replay", got)
		}
		list := f.captures.List(1, "")
		if len(list) != 1 || list[0].ID == posted.ID || list[0].Request.Method != "POST" ||
			!strings.HasSuffix(string(list[0].Request.Raw), `{"item":"tea","qty":2}`) {
			t.Errorf("replayed capture %+v", list)
		}
	})

	t.Run("binary body as hex", func(t *testing.T) {
		var id string
		for _, c := range f.captures.List(maxListLimit, "") {
			if c.Request.URI == "/logo.png" {
				id = c.ID
			}
		}
		err := chromedp.Do(ctx,
			chromedp.Click(row(id)),
			void(until(`document.getElementById('detail').textContent.includes('binary')`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		if detail := text("#detail"); !strings.Contains(detail, "89 50 4e 47") {
			t.Errorf("no hex of the PNG's head in:\n%s", detail)
		}
	})

	t.Run("phone viewport", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
			t.Fatal(err)
		}
		if !eval(`getComputedStyle(document.querySelector('.panes')).flexDirection === 'column'`) {
			t.Error("at 390px the panes are not one column")
		}
		if eval(`document.documentElement.scrollWidth > window.innerWidth`) {
			t.Error("the page is wider than the phone's viewport")
		}
		screenshot(t, ctx, dir, "inspector-390x844.png")
		// Tapping a request brings its detail into view.
		err := chromedp.Do(ctx,
			chromedp.Click(row(posted.ID)),
			void(until(`document.getElementById('detail').textContent.includes('hello-header')`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		if eval(`document.documentElement.scrollWidth > window.innerWidth`) {
			t.Error("the detail is wider than the phone's viewport")
		}
		screenshot(t, ctx, dir, "inspector-390x844-detail.png")
	})

	t.Run("clears", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.EmulateViewport(1280, 800),
			chromedp.Click(chromedp.CSS("#clear")),
			void(rows("=== 0")),
			void(until(`!document.getElementById('empty').hidden`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(f.captures.List(10, "")); n != 0 {
			t.Errorf("%d captures left", n)
		}
		screenshot(t, ctx, dir, "inspector-empty-1280x800.png")
		// A capture after the clear arrives live.
		f.send(t, "GET", "/after-clear", "")
		if err := chromedp.Do(ctx, void(rows("=== 1"))); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("polls without server-sent events", func(t *testing.T) {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: "delete window.EventSource;"})
		if err != nil {
			t.Fatal(err)
		}
		err = chromedp.Do(ctx,
			chromedp.Reload(),
			void(until(`document.getElementById('live').textContent === 'polling'`)),
			void(rows("=== 1")),
		)
		if err != nil {
			t.Fatal(err)
		}
		f.send(t, "GET", "/while-polling", "")
		if err := chromedp.Do(ctx, void(rows("=== 2"))); err != nil {
			t.Fatal(err)
		}
		if got := text(".row .path"); got != "/while-polling" {
			t.Errorf("newest row %q", got)
		}
	})

	cancel()
	<-errs.done
	errs.check(t)
}
