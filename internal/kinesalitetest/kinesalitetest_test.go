package kinesalitetest

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// TestReadAllReturnsWhatWasPut puts records across the shards of a stream
// and reads every one back, in pages of 100.
func TestReadAllReturnsWhatWasPut(t *testing.T) {
	srv := Start(t)
	srv.pageLimit = 100
	arn := srv.CreateStream(t, "readall", 3)
	if want := "arn:aws:kinesis:us-east-1:123456789012:stream/readall"; arn != want {
		t.Fatalf("CreateStream returned %s, want %s", arn, want)
	}

	const n = 1200
	put := make(map[string]string, n)
	var entries []types.PutRecordsRequestEntry
	for i := range n {
		key, data := fmt.Sprintf("key-%04d", i), fmt.Sprintf(`{"n":%d}`, i)
		put[key] = data
		entries = append(entries, types.PutRecordsRequestEntry{PartitionKey: aws.String(key), Data: []byte(data)})
	}
	for start := 0; start < n; start += 500 {
		out, err := srv.Client().PutRecords(t.Context(), &kinesis.PutRecordsInput{
			StreamName: aws.String("readall"),
			Records:    entries[start:min(start+500, n)],
		})
		if err != nil || aws.ToInt32(out.FailedRecordCount) != 0 {
			t.Fatalf("putting records: %v (%d failed)", err, aws.ToInt32(out.FailedRecordCount))
		}
	}

	got := srv.ReadAll(t, arn)
	if len(got) != n {
		t.Fatalf("read %d records, want %d", len(got), n)
	}
	shards := map[string]bool{}
	for _, r := range got {
		if put[r.PartitionKey] != string(r.Data) {
			t.Fatalf("read %s = %q, put %q", r.PartitionKey, r.Data, put[r.PartitionKey])
		}
		delete(put, r.PartitionKey)
		shards[r.ShardID] = true
	}
	if len(shards) != 3 {
		t.Errorf("records are in %d shards, want 3", len(shards))
	}
}

// TestStartTwice runs two servers side by side: each test gets its own.
func TestStartTwice(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.Endpoint == b.Endpoint {
		t.Fatalf("both servers at %s", a.Endpoint)
	}
	a.CreateStream(t, "only-in-a", 1)
	out, err := b.Client().ListStreams(t.Context(), &kinesis.ListStreamsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.StreamNames) != 0 {
		t.Fatalf("b has streams %v", out.StreamNames)
	}
}

// TestSurvivesResetRequests resets connections in the middle of requests,
// as a killed writer does, and checks that kinesalite still answers.
func TestSurvivesResetRequests(t *testing.T) {
	srv := Start(t)
	addr := strings.TrimPrefix(srv.Endpoint, "http://")
	for range 3 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.1\r\nX-Amz-Target: Kinesis_20131202.PutRecords\r\nContent-Length: 100000\r\n\r\n{\"Records\": [", addr)
		if err := conn.(*net.TCPConn).SetLinger(0); err != nil { // close with a reset
			t.Fatal(err)
		}
		conn.Close()
	}
	srv.CreateStream(t, "after-resets", 1)
}
