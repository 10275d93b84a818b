package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/retry"
)

// playSlowloris opens cfg.SlowUploads uploads from B that send one byte
// of a chunked body every cfg.SlowEvery, for cfg.SlowFor.
func (r *attackRun) playSlowloris(ctx context.Context) attackOutcome {
	u, err := url.Parse(r.target.URL)
	if err != nil {
		return attackOutcome{err: err}
	}
	var (
		t    tally
		wg   sync.WaitGroup
		mu   sync.Mutex
		open int // still sending at the end, unanswered
		cut  int // closed by sluice without an answer
	)
	end := time.Now().Add(r.cfg.SlowFor)
	for range r.cfg.SlowUploads {
		wg.Go(func() {
			res := slowUpload(ctx, u.Host, r.target.TokenB, end, r.cfg.SlowEvery)
			mu.Lock()
			defer mu.Unlock()
			switch res.how {
			case slowAnswered:
				t.addAnswer(res.answer)
			case slowOpen:
				open++
			default:
				cut++
			}
		})
	}
	// Once every upload has started, B tries an ordinary request too.
	if retry.Sleep(ctx, min(3*time.Second, r.cfg.SlowFor/2)) == nil {
		body, err := r.bEvent("http_request_complete.v0", "", nil)
		if err == nil {
			t.add(AnswerBOrdinary, r.b.do(ctx, http.MethodPost, "/events", body, nil))
		}
	}
	wg.Wait()
	answered := 0
	for _, a := range t.answers {
		if a.What == AnswerSlowUpload {
			answered += a.Count
		}
	}
	return attackOutcome{
		summary:  fmt.Sprintf("%d of %d slow uploads answered early, %d cut without an answer, %d still open at the end", answered, r.cfg.SlowUploads, cut, open),
		answers:  t.answers,
		findings: map[string]any{"slow_uploads_open_at_end": open, "slow_uploads_cut": cut},
	}
}

// How a slow upload ended.
const (
	slowAnswered = iota // sluice answered
	slowOpen            // still open at the end
	slowCut             // sluice closed it without an answer
)

// slowResult is how a slow upload ended, and sluice's answer if one came.
type slowResult struct {
	how    int
	answer AttackAnswer
	err    error // of reading the answer
}

// slowUpload posts a chunked body to host a byte every every until end.
// The goroutine reading the answer ends when the connection is closed, on
// return.
func slowUpload(ctx context.Context, host, token string, end time.Time, every time.Duration) slowResult {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return slowResult{how: slowCut}
	}
	defer c.Close()
	_ = c.SetDeadline(end.Add(5 * time.Second))
	head := "POST /events HTTP/1.1\r\nHost: " + host + "\r\nService-Version: " + apiconv.SupportedVersion + "\r\nAuthorization: Bearer " + token + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
	if _, err := c.Write([]byte(head)); err != nil {
		return slowResult{how: slowCut}
	}
	answered := make(chan slowResult, 1)
	go func() { answered <- readSlowAnswer(c) }()
	tick := time.NewTicker(every)
	defer tick.Stop()
	chunk := []byte("1\r\n[\r\n")
	for time.Now().Before(end) {
		select {
		case res := <-answered:
			return res
		case <-ctx.Done():
			return slowResult{how: slowOpen}
		case <-tick.C:
			if _, err := c.Write(chunk); err != nil {
				// Closed by sluice: with an answer, or without.
				select {
				case res := <-answered:
					return res
				case <-time.After(time.Second):
					return slowResult{how: slowCut}
				}
			}
			chunk = []byte("1\r\n \r\n")
		}
	}
	select {
	case res := <-answered:
		return res
	default:
		return slowResult{how: slowOpen}
	}
}

// readSlowAnswer reads sluice's answer to a slow upload.
func readSlowAnswer(c net.Conn) slowResult {
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return slowResult{how: slowCut, err: err}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: body}
	var e struct {
		Code string `json:"error_code"`
	}
	if json.Unmarshal(body, &e) == nil {
		a.code = e.Code
	}
	return slowResult{how: slowAnswered, answer: a.attackAnswer(AnswerSlowUpload)}
}

// playBigBodies posts cfg.BigBodies bodies of cfg.BigBodyBytes of invalid
// events at once from B.
func (r *attackRun) playBigBodies(ctx context.Context) attackOutcome {
	body := invalidEvents(r.cfg.BigBodyBytes)
	client := newAPIClient(r.target.URL, r.target.TokenB, r.cfg.BigBodies, r.cfg.RequestTimeout)
	defer client.close()
	var (
		t  tally
		wg sync.WaitGroup
	)
	for range r.cfg.BigBodies {
		wg.Go(func() { t.add(AnswerBigBody, client.do(ctx, http.MethodPost, "/events", body, nil)) })
	}
	wg.Wait()
	ok, all := t.accepted(AnswerBigBody)
	return attackOutcome{summary: fmt.Sprintf("%d bodies of %.1f MiB sent, %d accepted", all, float64(len(body))/(1<<20), ok), answers: t.answers}
}

// invalidEvents returns a JSON array of about n bytes of events of a kind
// that does not exist.
func invalidEvents(n int) []byte {
	one := `{"event_type":"no_such_kind.v0","object":{"pad":"` + strings.Repeat("x", 1000) + `"}}`
	b := make([]byte, 0, n)
	b = append(b, '[')
	for len(b)+len(one)+2 < n {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, one...)
	}
	return append(b, ']')
}
