package pipeline

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

// TestRefusalText checks the text of each class of refusal, which the
// worker's dead letters and redrive's failures carry: made when asked, it
// says what it said when it was made with the refusal.
func TestRefusalText(t *testing.T) {
	ev, err := schemas.NewSampler(1).Event("http_request_complete.v0")
	if err != nil {
		t.Fatal(err)
	}
	rp := routePlan{subscriptionID: "sub_1", selectors: map[string]planSelector{}}
	ctx := context.Background()

	_, refused := rp.record(ctx, ev.AppendJSON(nil))
	if want := "subscription sub_1 no longer has a source of kind http_request_complete.v0"; refused.class != RedriveUnroutable || refused.text() != want {
		t.Errorf("an event of no source: %s %q, want %s %q", refused.class, refused.text(), RedriveUnroutable, want)
	}
	data := []byte("no envelope")
	_, _, readErr := schemas.ReadHeader(data)
	if _, refused := rp.record(ctx, data); refused.class != dlqMalformed || readErr == nil || refused.text() != readErr.Error() {
		t.Errorf("no envelope: %s %q, want %s %v", refused.class, refused.text(), dlqMalformed, readErr)
	}
	for _, tc := range []struct {
		refused refusal
		want    string
	}{
		{refusal{class: RedriveFiltered, subscriptionID: "sub_1", eventType: "audit.v0"}, "the filter of subscription sub_1's source audit.v0 rejects the event now"},
		{refusal{class: dlqFilter, message: "filter: out of budget"}, "filter: out of budget"},
	} {
		if got := tc.refused.text(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.refused.class, got, tc.want)
		}
	}
}
