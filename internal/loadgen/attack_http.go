package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/internal/apiconv"
)

// maxAnswerBody bounds what is read of an answer: enough for any error
// and for /metrics.
const maxAnswerBody = 16 << 20

// checkLoopbackURL returns an error unless u is an http URL of a loopback
// address: the attacks are for a sluice on this machine only.
func checkLoopbackURL(what, u string) error {
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return fmt.Errorf("%s %q: give an http URL such as http://127.0.0.1:8080", what, u)
	}
	host := parsed.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s %q: the attacks are played against a sluice on this machine only: give a loopback address", what, u)
	}
	return nil
}

// answer is what sluice answered a request.
type answer struct {
	status     int    // 0 when the request failed
	code       string // error_code of an error answer
	retryAfter string
	body       []byte
	err        error
	took       time.Duration
}

// text is the answer in a few words: "202", "400 ERR_SLUICE_100", or the
// error.
func (a answer) text() string {
	switch {
	case a.status == 0 && a.err != nil:
		return "no answer: " + a.err.Error()
	case a.code != "":
		return strconv.Itoa(a.status) + " " + a.code
	}
	return strconv.Itoa(a.status)
}

// attackAnswer turns the answer into the report's form.
func (a answer) attackAnswer(what string) AttackAnswer {
	out := AttackAnswer{What: what, Status: a.status, Code: a.code, Count: 1, RetryAfter: a.retryAfter != ""}
	if a.status == 0 && a.err != nil {
		out.Detail = a.err.Error()
	} else if a.status >= 400 {
		var e struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(a.body, &e) == nil {
			out.Detail = e.Msg
		}
	}
	return out
}

// ok reports whether the status is 2xx.
func (a answer) ok() bool { return a.status >= 200 && a.status < 300 }

// apiClient sends requests to sluice's API with one account's key.
type apiClient struct {
	http    *http.Client
	base    string
	token   string
	timeout time.Duration
}

func newAPIClient(base, token string, conns int, timeout time.Duration) *apiClient {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: 30 * time.Second, DisableCompression: true}
	return &apiClient{http: &http.Client{Transport: tr}, base: base, token: token, timeout: timeout}
}

// do sends the request and reads the answer; edit, when given, changes
// the request before it is sent (its Host, its headers).
func (c *apiClient) do(ctx context.Context, method, path string, body []byte, edit func(*http.Request)) answer {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return answer{err: err}
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set(apiconv.HeaderVersion, apiconv.SupportedVersion)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if edit != nil {
		edit(req)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBody))
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: out, err: err, took: time.Since(start)}
	if resp.StatusCode >= 400 {
		var e struct {
			Code string `json:"error_code"`
		}
		if json.Unmarshal(out, &e) == nil {
			a.code = e.Code
		}
	}
	return a
}

// create POSTs a resource and returns its id with the answer; the id is
// empty unless it was created.
func (c *apiClient) create(ctx context.Context, path string, body []byte) (string, answer) {
	a := c.do(ctx, http.MethodPost, path, body, nil)
	if a.status != http.StatusCreated {
		return "", a
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(a.body, &created); err != nil || created.ID == "" {
		a.err = fmt.Errorf("POST %s: 201 without an id: %s", path, a.body)
		return "", a
	}
	return created.ID, a
}

// mustCreate is create for the resources the harness itself needs: it
// returns an error when the resource was not created.
func (c *apiClient) mustCreate(ctx context.Context, path string, body []byte) (string, error) {
	id, a := c.create(ctx, path, body)
	if id == "" {
		return "", fmt.Errorf("POST %s: %s %s", path, a.text(), bytes.TrimSpace(a.body))
	}
	return id, nil
}

// close drops the idle connections.
func (c *apiClient) close() { c.http.CloseIdleConnections() }
