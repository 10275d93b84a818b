package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/destinations"
	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
)

// statusResponse is GET /event_destinations/{id}/status.
type statusResponse struct {
	State         string  `json:"state"`
	LastSuccessAt *string `json:"last_success_at"`
	LastError     *struct {
		Class   string  `json:"class"`
		Code    *string `json:"code"`
		Message string  `json:"message"`
		At      string  `json:"at"`
	} `json:"last_error"`
	EventsPending      uint64 `json:"events_pending"`
	EventsDeadLettered uint64 `json:"events_dead_lettered"`
}

// trialResponse is POST /event_destinations/{id}/test.
type trialResponse struct {
	Result     string  `json:"result"`
	Class      *string `json:"class"`
	Code       *string `json:"code"`
	Message    *string `json:"message"`
	DurationMS int64   `json:"duration_ms"`
}

// otherAccountDestination creates an account with a destination and
// returns the destination's id.
func otherAccountDestination(t *testing.T, st *store.Store) string {
	t.Helper()
	ctx := t.Context()
	other, err := st.CreateAccount(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.CreateDestination(ctx, other.ID, store.Destination{Target: store.Target{Kinesis: &store.KinesisTarget{
		Auth: store.AWSAuth{Role: &store.AWSRole{RoleARN: testRoleARN}}, StreamARN: testStreamARN,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func TestDestinationStatus(t *testing.T) {
	var kv jetstream.KeyValue
	e := newTestEnv(t, apitest.WithDeps(func(deps *api.Deps, js jetstream.JetStream) {
		var err error
		if kv, err = pipeline.EnsureStatusBucket(context.Background(), js, 0, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := pipeline.EnsureDLQStream(context.Background(), js, 0, 1); err != nil {
			t.Fatal(err)
		}
		deps.DeliveryStatus = pipeline.NewStatusReader(js, kv, 5*time.Minute)
	}))
	ctx := t.Context()
	resp, body := e.call(t, e.token, http.MethodPost, "/event_destinations", kinesisBody)
	apitest.WantStatus(t, resp, body, http.StatusCreated)
	dest := apitest.DecodeAs[destination](t, body)
	path := "/event_destinations/" + dest.ID + "/status"

	// Never written to: ok, nothing known.
	resp, body = e.call(t, e.token, http.MethodGet, path, "")
	apitest.WantStatus(t, resp, body, http.StatusOK)
	if st := apitest.DecodeAs[statusResponse](t, body); st.State != "ok" || st.LastSuccessAt != nil || st.LastError != nil || st.EventsPending != 0 || st.EventsDeadLettered != 0 {
		t.Fatalf("status of a new destination: %s", body)
	}

	// Two processes: one succeeded 10 minutes ago, the other fails as a
	// whole since then.
	now := time.Now().UTC()
	records := map[string]pipeline.StatusRecord{
		"p1": {LastSuccessAt: now.Add(-10 * time.Minute), LastWriteAt: now.Add(-10 * time.Minute), LastOutcome: pipeline.OutcomeOK},
		"p2": {
			LastError:   &pipeline.StatusError{Class: "access_denied", Code: "AccessDeniedException", Message: "not allowed", At: now.Add(-time.Second)},
			LastWriteAt: now.Add(-time.Second), LastOutcome: pipeline.OutcomeFailed, FailingSince: now.Add(-9 * time.Minute),
		},
	}
	for process, rec := range records {
		data, _ := json.Marshal(rec)
		if _, err := kv.Put(ctx, e.account+"."+dest.ID+"."+process, data); err != nil {
			t.Fatal(err)
		}
	}
	// Three events pending on a route consumer of the destination, and
	// two dead letters.
	kind := "tcp_connection_closed.v0"
	if _, err := e.stream.CreateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: pipeline.ConsumerName("esb_status", dest.ID), FilterSubject: schemas.EventSubject(e.account, kind), AckPolicy: jetstream.AckExplicitPolicy,
	}); err != nil {
		t.Fatal(err)
	}
	events := apitest.Samples(t, 7, 12)
	var sent []apitest.WireEvent
	for _, ev := range events {
		if ev.Type == kind {
			sent = append(sent, ev)
		}
	}
	resp, body = e.post(t, apitest.MustJSON(t, sent), nil)
	apitest.WantStatus(t, resp, body, http.StatusAccepted)
	for i := range 2 {
		msg := nats.NewMsg(pipeline.DLQSubject(e.account, dest.ID))
		msg.Data = []byte(`{}`)
		msg.Header.Set(nats.MsgIdHdr, dest.ID+string(rune('a'+i)))
		if _, err := e.js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.js.Publish(ctx, pipeline.DLQSubject(e.account, "ed_another"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}

	resp, body = e.call(t, e.token, http.MethodGet, path, "")
	apitest.WantStatus(t, resp, body, http.StatusOK)
	st := apitest.DecodeAs[statusResponse](t, body)
	if st.State != "failing" || st.LastSuccessAt == nil || st.LastError == nil || st.LastError.Class != "access_denied" ||
		st.LastError.Code == nil || *st.LastError.Code != "AccessDeniedException" || st.LastError.Message != "not allowed" {
		t.Errorf("status: %s", body)
	}
	if st.EventsPending != uint64(len(sent)) || st.EventsDeadLettered != 2 {
		t.Errorf("pending %d (want %d), dead-lettered %d (want 2)", st.EventsPending, len(sent), st.EventsDeadLettered)
	}
	if at, err := time.Parse(time.RFC3339, *st.LastSuccessAt); err != nil || at.Sub(now.Add(-10*time.Minute)).Abs() > time.Millisecond {
		t.Errorf("last_success_at %s: %v", *st.LastSuccessAt, err)
	}

	// Another account's destination, and one that does not exist, are
	// not found.
	for _, id := range []string{otherAccountDestination(t, e.store), "ed_nosuchdestination0000000000"} {
		resp, body = e.call(t, e.token, http.MethodGet, "/event_destinations/"+id+"/status", "")
		apitest.WantStatus(t, resp, body, http.StatusNotFound)
		if code := apitest.DecodeError(t, body).ErrorCode; code != apiconv.CodeResourceNotFound.String() {
			t.Errorf("%s: %s", id, code)
		}
	}
}

func TestDestinationTest(t *testing.T) {
	emu := emulatortest.Start(t, emulator.Config{AutoCreate: true})
	factory := destinations.Factory{Endpoint: emu.Endpoint, Auth: &sinks.AWSAuth{AccessKeyID: emulatortest.AccessKeyID, SecretAccessKey: emulatortest.SecretAccessKey}}
	e := newTestEnv(t, apitest.WithDeps(func(deps *api.Deps, _ jetstream.JetStream) {
		deps.DestinationTrial = pipeline.NewTrial(factory.New, 0)
	}))
	const group = "trial-group"
	logsBody := `{"target":{"cloudwatch_logs":{"auth":{"creds":{"aws_access_key_id":"` + testKeyID + `","aws_secret_access_key":"` + testSecret + `"}},"log_group_arn":"arn:aws:logs:us-east-1:123456789012:log-group:` + group + `"}}}`
	resp, body := e.call(t, e.token, http.MethodPost, "/event_destinations", logsBody)
	apitest.WantStatus(t, resp, body, http.StatusCreated)
	dest := apitest.DecodeAs[destination](t, body)
	path := "/event_destinations/" + dest.ID + "/test"

	resp, body = e.call(t, e.token, http.MethodPost, path, "")
	apitest.WantStatus(t, resp, body, http.StatusOK)
	if res := apitest.DecodeAs[trialResponse](t, body); res.Result != "delivered" || res.Class != nil || res.Code != nil || res.Message != nil {
		t.Fatalf("test of a working destination: %s", body)
	}
	out, err := emu.LogsClient().GetLogEvents(t.Context(), &cloudwatchlogs.GetLogEventsInput{
		LogGroupName: aws.String(group), LogStreamName: aws.String(pipeline.TrialLogStream),
	})
	if err != nil {
		t.Fatalf("reading the log stream %s: %v", pipeline.TrialLogStream, err)
	}
	if len(out.Events) != 1 {
		t.Fatalf("%d events in %s, want 1", len(out.Events), pipeline.TrialLogStream)
	}
	var ev struct {
		Type      string `json:"event_type"`
		AccountID string `json:"account_id"`
		Object    struct {
			ID string `json:"id"`
		} `json:"object"`
	}
	msg := aws.ToString(out.Events[0].Message)
	if err := json.Unmarshal([]byte(msg), &ev); err != nil || ev.Type != "event_destination_updated.v0" || ev.AccountID != e.account || ev.Object.ID != dest.ID {
		t.Errorf("the test event: %s (%v)", msg, err)
	}
	if strings.Contains(msg, testSecret) {
		t.Errorf("the test event holds the secret: %s", msg)
	}

	if err := emu.SetFault(emulator.Fault{Service: emulator.ServiceLogs, Resource: group, AccessDenied: true}); err != nil {
		t.Fatal(err)
	}
	resp, body = e.call(t, e.token, http.MethodPost, path, "")
	apitest.WantStatus(t, resp, body, http.StatusOK)
	res := apitest.DecodeAs[trialResponse](t, body)
	if res.Result != "failed" || res.Class == nil || *res.Class != "access_denied" || res.Code == nil || *res.Code != "AccessDeniedException" || res.Message == nil {
		t.Fatalf("test of a denied destination: %s", body)
	}

	resp, body = e.call(t, e.token, http.MethodPost, "/event_destinations/"+otherAccountDestination(t, e.store)+"/test", "")
	apitest.WantStatus(t, resp, body, http.StatusNotFound)
}
