package tail_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/sluicehq/sluice/internal/kinesalitetest"
	"github.com/sluicehq/sluice/internal/tail"
)

// startKinesalite starts kinesalite and points the AWS SDK's default
// configuration at it, as a user's environment would.
func startKinesalite(t *testing.T) *kinesalitetest.Server {
	t.Helper()
	kl := kinesalitetest.Start(t)
	for _, kv := range kl.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return kl
}

// put writes records named prefix-0 … prefix-(n-1) to the stream.
func put(t *testing.T, kl *kinesalitetest.Server, streamARN, prefix string, n int) []string {
	t.Helper()
	var entries []types.PutRecordsRequestEntry
	var want []string
	for i := range n {
		data := fmt.Sprintf(`{"event_id":"%s-%d"}`, prefix, i)
		want = append(want, data)
		entries = append(entries, types.PutRecordsRequestEntry{Data: []byte(data), PartitionKey: aws.String(fmt.Sprintf("%s-%d", prefix, i))})
	}
	out, err := kl.Client().PutRecords(t.Context(), &kinesis.PutRecordsInput{StreamName: aws.String(streamARN[strings.LastIndex(streamARN, "/")+1:]), Records: entries})
	if err != nil || aws.ToInt32(out.FailedRecordCount) != 0 {
		t.Fatalf("putting records: %v", err)
	}
	return want
}

// collect returns an emit that keeps the records' data.
func collect(got *[]string) func(tail.Record) error {
	return func(r tail.Record) error {
		*got = append(*got, string(r.Data))
		return nil
	}
}

func TestKinesisReadSince(t *testing.T) {
	kl := startKinesalite(t)
	streamARN := kl.CreateStream(t, "tail-since", 3)
	want := put(t, kl, streamARN, "a", 50)
	r, err := tail.New(t.Context(), tail.Config{ARN: streamARN, Since: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := r.Read(t.Context(), collect(&got)); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read %d records, want the %d put", len(got), len(want))
	}
}

func TestKinesisFollowFromNow(t *testing.T) {
	kl := startKinesalite(t)
	streamARN := kl.CreateStream(t, "tail-follow", 2)
	put(t, kl, streamARN, "before", 10)
	r, err := tail.New(t.Context(), tail.Config{ARN: streamARN, Follow: true, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	records := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		done <- r.Read(ctx, func(rec tail.Record) error {
			records <- string(rec.Data)
			return nil
		})
	}()
	// LATEST starts after the records put before Read: put rounds of
	// records until one shows, since the reader's iterators may not be
	// taken yet, then a last round, which must show whole.
	var want, got []string
	for len(got) == 0 {
		want = append(want, put(t, kl, streamARN, fmt.Sprintf("round%d", len(want)), 5)...)
		select {
		case rec := <-records:
			got = append(got, rec)
		case <-time.After(200 * time.Millisecond): // then another round
		case <-ctx.Done():
			t.Fatal("nothing read while following")
		}
	}
	last := put(t, kl, streamARN, "last", 5)
	want = append(want, last...)
	for !containsAll(got, last) {
		select {
		case rec := <-records:
			got = append(got, rec)
		case <-ctx.Done():
			t.Fatalf("read %d records while following, not the last round", len(got))
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Read after cancel: %v", err)
	}
	for _, rec := range got {
		if strings.Contains(rec, "before") {
			t.Fatalf("read %s, put before reading from now", rec)
		}
		if !slices.Contains(want, rec) {
			t.Fatalf("read %s, never put", rec)
		}
	}
}

func TestNewRefusesOtherARNs(t *testing.T) {
	for _, a := range []string{
		"not an arn",
		"arn:aws:s3:::bucket",
		"arn:aws:kinesis:us-east-1:123456789012:table/x",
		"arn:aws:kinesis::123456789012:stream/no-region",
	} {
		if _, err := tail.New(t.Context(), tail.Config{ARN: a}); err == nil {
			t.Errorf("New(%q) took it", a)
		}
	}
}

func containsAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}
