package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// The Kinesis operation the endpoint answers, and the paths of its own.
const (
	putRecordsTarget = "Kinesis_20131202.PutRecords"
	// endpointStatsPath answers GET with the endpoint's EndpointStats.
	endpointStatsPath = "/_bench/stats"
	awsJSONType       = "application/x-amz-json-1.1"
)

// partitionKeyName is counted to count a PutRecords body's records: every
// record has one, and no other member or value of the body can hold it
// (Data is base64, which has no quotes).
var partitionKeyName = []byte(`"PartitionKey"`)

// EndpointStats is what a KinesisEndpoint has answered since it started.
type EndpointStats struct {
	// Calls and Records are the PutRecords calls answered and the records
	// they carried, every one reported stored.
	Calls   int64 `json:"calls"`
	Records int64 `json:"records"`
	// Refused is how many other requests were answered with an error: any
	// operation but PutRecords, and a PutRecords with no record.
	Refused int64 `json:"refused"`
}

// KinesisEndpoint is the least of a Kinesis endpoint a sluice route can
// write to: it answers every PutRecords call with success for every
// record, storing none, and any other request with an AWS JSON error. It
// counts the records by their PartitionKey members, without decoding the
// body, so that it takes little of the machine's CPU from the process
// measured. It checks no signature.
type KinesisEndpoint struct {
	calls, records, refused atomic.Int64
	sequence                atomic.Uint64
	buffers                 sync.Pool // of *bytes.Buffer, a request's body then its answer
}

// NewKinesisEndpoint returns an endpoint that has answered nothing yet.
func NewKinesisEndpoint() *KinesisEndpoint {
	return &KinesisEndpoint{buffers: sync.Pool{New: func() any { return new(bytes.Buffer) }}}
}

// Stats returns what the endpoint has answered so far.
func (e *KinesisEndpoint) Stats() EndpointStats {
	return EndpointStats{Calls: e.calls.Load(), Records: e.records.Load(), Refused: e.refused.Load()}
}

// ServeHTTP answers PutRecords, and GET /_bench/stats with the endpoint's
// EndpointStats as JSON.
func (e *KinesisEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == endpointStatsPath {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(e.Stats())
		return
	}
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != putRecordsTarget {
		e.refused.Add(1)
		writeAWSError(w, "UnknownOperationException", fmt.Sprintf("this endpoint answers only %s, not %s %s", putRecordsTarget, r.Method, r.Header.Get("X-Amz-Target")))
		return
	}
	buf := e.buffers.Get().(*bytes.Buffer)
	defer e.buffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		e.refused.Add(1)
		writeAWSError(w, "SerializationException", "reading the body: "+err.Error())
		return
	}
	n := bytes.Count(buf.Bytes(), partitionKeyName)
	if n == 0 {
		e.refused.Add(1)
		writeAWSError(w, "ValidationException", "the request has no record")
		return
	}
	e.calls.Add(1)
	e.records.Add(int64(n))
	first := e.sequence.Add(uint64(n)) - uint64(n)
	buf.Reset()
	buf.WriteString(`{"FailedRecordCount":0,"Records":[`)
	var num [20]byte
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"SequenceNumber":"`)
		buf.Write(strconv.AppendUint(num[:0], first+uint64(i), 10))
		buf.WriteString(`","ShardId":"shardId-000000000000"}`)
	}
	buf.WriteString(`]}`)
	w.Header().Set("Content-Type", awsJSONType)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = w.Write(buf.Bytes())
}

// writeAWSError answers 400 with an AWS JSON error of the type.
func writeAWSError(w http.ResponseWriter, errType, message string) {
	body, _ := json.Marshal(map[string]string{"__type": errType, "message": message})
	w.Header().Set("Content-Type", awsJSONType)
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(body)
}

// endpointStats reads the stats of the endpoint at url.
func endpointStats(ctx context.Context, client *http.Client, url string) (EndpointStats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+endpointStatsPath, nil)
	if err != nil {
		return EndpointStats{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return EndpointStats{}, fmt.Errorf("reading the endpoint's stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return EndpointStats{}, fmt.Errorf("reading the endpoint's stats: %s: %s", resp.Status, body)
	}
	var stats EndpointStats
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil {
		return EndpointStats{}, fmt.Errorf("decoding the endpoint's stats: %w", err)
	}
	return stats, nil
}
