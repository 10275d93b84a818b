package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestKinesisEndpoint(t *testing.T) {
	endpoint := NewKinesisEndpoint()
	srv := httptest.NewServer(endpoint)
	t.Cleanup(srv.Close)
	call := func(target, body string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Target", target)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}

	status, typ, body := call(putRecordsTarget, `{"Records":[{"Data":"eyJhIjoxfQ==","PartitionKey":"ev_1"},{"Data":"eyJhIjoyfQ==","PartitionKey":"ev_2"}],"StreamARN":"arn:aws:kinesis:us-east-1:123456789012:stream/s"}`)
	if status != http.StatusOK || typ != awsJSONType {
		t.Fatalf("PutRecords answered %d %s: %s", status, typ, body)
	}
	var answer struct {
		FailedRecordCount int
		Records           []struct{ SequenceNumber, ShardId string }
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil {
		t.Fatalf("PutRecords answer %s: %v", body, err)
	}
	if answer.FailedRecordCount != 0 || len(answer.Records) != 2 || answer.Records[0].SequenceNumber == answer.Records[1].SequenceNumber || answer.Records[1].ShardId == "" {
		t.Errorf("PutRecords of 2 records answered %s", body)
	}

	for _, tc := range []struct{ target, body, errType string }{
		{"Kinesis_20131202.DescribeStream", `{}`, "UnknownOperationException"},
		{putRecordsTarget, `{"Records":[]}`, "ValidationException"},
	} {
		status, typ, body := call(tc.target, tc.body)
		if status != http.StatusBadRequest || typ != awsJSONType || !strings.Contains(body, `"__type":"`+tc.errType+`"`) {
			t.Errorf("%s %s answered %d %s %s, want 400 with %s", tc.target, tc.body, status, typ, body, tc.errType)
		}
	}

	stats, err := endpointStats(t.Context(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if want := (EndpointStats{Calls: 1, Records: 2, Refused: 2}); stats != want {
		t.Errorf("stats %+v, want %+v", stats, want)
	}
}

func TestDrainConfigValidate(t *testing.T) {
	helper := []string{"sluice", "bench", "drain-helper"}
	for _, tc := range []struct {
		name    string
		cfg     DrainConfig
		wantErr bool
	}{
		{"defaults", DrainConfig{Helper: helper}, false},
		{"no helper", DrainConfig{}, true},
		{"odd events", DrainConfig{Helper: helper, Events: 1001}, true},
		{"negative rounds", DrainConfig{Helper: helper, Rounds: -1}, true},
		{"negative event bytes", DrainConfig{Helper: helper, EventBytes: -1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err != nil) != tc.wantErr {
				t.Errorf("Validate() = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

func TestDrainCheckFloors(t *testing.T) {
	b, err := newPaddedBacklog(DefaultDrainEventBytes)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.averageStoredSize(); got < DefaultDrainEventBytes-10 || got > DefaultDrainEventBytes+10 {
		t.Errorf("padded events are stored in %d bytes, want about %d", got, DefaultDrainEventBytes)
	}
	report := func(pass, filter, cpu float64) DrainReport {
		r := newDrainReport(DrainConfig{Events: 2, Rounds: 1}, b)
		for i, rate := range []float64{100, pass * 100, filter * 100} {
			r.Modes[i].Runs = []DrainRun{{Events: 2, EventsPerSec: rate, CPUMsPer1000: cpu, LoadAverage: 1}}
		}
		r.summarise()
		return r
	}
	if err := report(PassThroughFloor, FilterFloor, PassThroughCPULimit).CheckFloors(); err != nil {
		t.Errorf("CheckFloors at the floors and limit = %v, want nil", err)
	}
	r := report(PassThroughFloor-0.01, FilterFloor, PassThroughCPULimit+0.1)
	err = r.CheckFloors()
	var floor *FloorError
	if !errors.As(err, &floor) || floor.Mode != ModePassThrough || !errors.Is(err, ErrOverLimit) {
		t.Fatalf("CheckFloors below the pass-through floor and over the CPU limit = %v", err)
	}
	var table bytes.Buffer
	if err := r.Format(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BELOW FLOOR", "OVER LIMIT", "MISSED: pass-through reached", "load average"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
	checkReportForms(t, r, []string{ModeRawDrain, ModePassThrough, ModeFilter}, func(r DrainReport) int { return len(r.Modes) })
}
