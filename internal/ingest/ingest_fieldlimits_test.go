package ingest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
)

// TestIngestRefusesOverLongFilterableField posts an event whose
// conn.server_name is a million bytes, which filters' cost estimate could
// not bound: it is a 400 whose per-event error names the field and its
// limit, and nothing is stored.
func TestIngestRefusesOverLongFilterableField(t *testing.T) {
	e := newTestEnv(t)
	body := `[{"event_type":"http_request_complete.v0","object":{"conn":{"server_name":"` + strings.Repeat("a", 1_000_000) + `"}}}]`
	resp, out := e.post(t, []byte(body), nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400: %.300s", resp.StatusCode, out)
	}
	errBody := apitest.DecodeError(t, out)
	if errBody.ErrorCode != "ERR_SLUICE_301" {
		t.Fatalf("error code %s, want ERR_SLUICE_301", errBody.ErrorCode)
	}
	errs := apitest.DetailJSON[[]any](t, errBody, "errors")
	if len(errs) != 1 {
		t.Fatalf("details.errors = %v, want 1 entry", errs)
	}
	msg, _ := errs[0].(map[string]any)["error"].(string)
	if !strings.Contains(msg, "object.conn.server_name") || !strings.Contains(msg, "limit of 253 bytes") {
		t.Errorf("per-event error %q does not name the field and its limit", msg)
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d events stored", n)
	}
}
