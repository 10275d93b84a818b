package apitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/openapitest"
	"github.com/sluicehq/sluice/schemas"
)

// DocumentedClient returns an HTTP client that fails the test when a
// request or response does not match the OpenAPI document at path
// (docs/openapi.yaml, relative to the test's package).
func DocumentedClient(t *testing.T, path string) *http.Client {
	t.Helper()
	return &http.Client{Transport: openapitest.Load(t, path).Transport(t, nil)}
}

// Do sends a request to base+path with the token (none when "") and
// Service-Version: 2, changed by edit, through client, and returns the
// response with its body read. It fails the test when the answer has no
// operation id.
func Do(t *testing.T, client *http.Client, base, method, path, token string, body io.Reader, edit func(*http.Request)) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Service-Version", "2")
	if edit != nil {
		edit(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get(apiconv.HeaderOperationID) == "" {
		t.Errorf("response has no %s header", apiconv.HeaderOperationID)
	}
	return resp, out
}

// DecodeAs decodes a JSON body as a T, failing the test if it is not one.
func DecodeAs[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return v
}

// WantStatus fails the test unless the response has the status.
func WantStatus(t *testing.T, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d: %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, body)
	}
}

// StoredEvents returns the data of every event of the account in the
// stream, in the order stored.
func StoredEvents(t *testing.T, stream jetstream.Stream, account string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{schemas.EventSubject(account, ">")}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var events [][]byte
	for pending := int(info.NumPending); len(events) < pending; {
		batch, err := cons.Fetch(pending-len(events), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			events = append(events, msg.Data())
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
	}
	return events
}
