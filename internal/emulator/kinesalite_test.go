package emulator_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/emulator"
	"github.com/sluicehq/sluice/internal/emulator/emulatortest"
	"github.com/sluicehq/sluice/internal/kinesalitetest"
)

// backend is one Kinesis implementation of the differential test, with the
// values its earlier answers gave.
type backend struct {
	name     string
	endpoint string
	shardID  string
	seq      string
	iterator string
	// page is what a paged answer said, for comparing the backends'.
	page string
}

// diffStep is one call of the differential test; body makes its input
// from what the backend answered before, save keeps what later steps need.
type diffStep struct {
	name   string
	target string
	header http.Header
	body   func(b *backend) any
	save   func(b *backend, answer rawResponse)
	// kinesaliteDiffers, when set, says why kinesalite's answer is not
	// AWS's: the emulator is held to want instead.
	kinesaliteDiffers string
	// kinesaliteLacks are fields of AWS's answer kinesalite leaves out.
	kinesaliteLacks []string
	want            string // the __type the emulator must answer, "" for 200
}

// TestKinesisMatchesKinesalite makes the same calls to the emulator and to
// kinesalite and compares the HTTP statuses, error __types and the field
// names of the answers. Where kinesalite is not AWS (per the AWS API
// reference), the step says so and the emulator is held to AWS's answer.
func TestKinesisMatchesKinesalite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kinesalite")
	}
	kl := kinesalitetest.Start(t)
	emu := emulatortest.Start(t, emulator.Config{})
	backends := []*backend{{name: "emulator", endpoint: emu.Endpoint}, {name: "kinesalite", endpoint: kl.Endpoint}}

	const stream = "diff"
	blob := func(n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), n)) }
	records := func(n int, key string, size int) []map[string]string {
		out := make([]map[string]string, n)
		for i := range out {
			out[i] = map[string]string{"PartitionKey": key, "Data": blob(size)}
		}
		return out
	}
	constant := func(v any) func(*backend) any { return func(*backend) any { return v } }
	// spread is records of keys that both shards get.
	var spread []map[string]string
	for i := range 10 {
		spread = append(spread, map[string]string{"PartitionKey": fmt.Sprintf("key-%d", i), "Data": blob(10)})
	}

	// AWS has answered ListStreams' StreamSummaries (and NextToken) since
	// 2022 (API_ListStreams); kinesalite answers StreamNames only.
	streamSummaries := []string{"StreamSummaries", "StreamSummaries[].StreamARN", "StreamSummaries[].StreamCreationTimestamp", "StreamSummaries[].StreamModeDetails", "StreamSummaries[].StreamModeDetails.StreamMode", "StreamSummaries[].StreamName", "StreamSummaries[].StreamStatus"}
	steps := []diffStep{
		{name: "create", target: "CreateStream", body: constant(map[string]any{"StreamName": stream, "ShardCount": 2})},
		{name: "create another", target: "CreateStream", body: constant(map[string]any{"StreamName": stream + "-other", "ShardCount": 1})},
		{
			name: "list streams, a page of one", target: "ListStreams", body: constant(map[string]any{"Limit": 1}),
			kinesaliteLacks: append([]string{"NextToken"}, streamSummaries...),
			save: func(b *backend, a rawResponse) {
				b.page = fmt.Sprintf("%v %v", a.Body["HasMoreStreams"], a.Body["StreamNames"])
			},
		},
		{
			name: "list streams after the first", target: "ListStreams", body: constant(map[string]any{"ExclusiveStartStreamName": stream}), kinesaliteLacks: streamSummaries,
			save: func(b *backend, a rawResponse) {
				b.page = fmt.Sprintf("%v %v", a.Body["HasMoreStreams"], a.Body["StreamNames"])
			},
		},
		{name: "create again", target: "CreateStream", body: constant(map[string]any{"StreamName": stream, "ShardCount": 2}), want: "ResourceInUseException"},
		{
			name: "describe", target: "DescribeStreamSummary", body: constant(map[string]any{"StreamName": stream}),
			// AWS has answered StreamModeDetails since on-demand streams (2021).
			kinesaliteLacks: []string{"StreamDescriptionSummary.StreamModeDetails", "StreamDescriptionSummary.StreamModeDetails.StreamMode"},
		},
		{
			name: "describe stream", target: "DescribeStream", body: constant(map[string]any{"StreamName": stream}),
			kinesaliteLacks: []string{"StreamDescription.StreamModeDetails", "StreamDescription.StreamModeDetails.StreamMode"},
		},
		{
			name: "describe stream, a page of one shard", target: "DescribeStream", body: constant(map[string]any{"StreamName": stream, "Limit": 1}),
			kinesaliteDiffers: "kinesalite ignores DescribeStream's Limit and ExclusiveStartShardId and answers every shard; AWS answers at most Limit shards after ExclusiveStartShardId, with HasMoreShards (API_DescribeStream)",
		},
		{name: "describe stream with a limit of 0", target: "DescribeStream", body: constant(map[string]any{"StreamName": stream, "Limit": 0}), want: "ValidationException"},
		{name: "describe a missing stream in full", target: "DescribeStream", body: constant(map[string]any{"StreamName": "missing"}), want: "ResourceNotFoundException"},
		{name: "list streams", target: "ListStreams", body: constant(map[string]any{}), kinesaliteLacks: streamSummaries},
		{name: "list streams after the last", target: "ListStreams", body: constant(map[string]any{"ExclusiveStartStreamName": stream + "-other"}), kinesaliteLacks: []string{"StreamSummaries"}},
		{name: "list streams with a limit of 0", target: "ListStreams", body: constant(map[string]any{"Limit": 0}), want: "ValidationException"},
		{name: "list shards", target: "ListShards", body: constant(map[string]any{"StreamName": stream}), save: func(b *backend, a rawResponse) {
			b.shardID = a.Body["Shards"].([]any)[0].(map[string]any)["ShardId"].(string)
		}},
		{name: "put records", target: "PutRecords", body: constant(map[string]any{"StreamName": stream, "Records": spread}), save: func(b *backend, a rawResponse) {
			for _, r := range a.Body["Records"].([]any) {
				if r := r.(map[string]any); r["ShardId"] == b.shardID {
					b.seq = r["SequenceNumber"].(string)
				}
			}
		}},
		{name: "put record", target: "PutRecord", body: constant(map[string]any{"StreamName": stream, "PartitionKey": "k", "Data": blob(5)})},
		{name: "data over 1 MiB", target: "PutRecords", body: constant(map[string]any{"StreamName": stream, "Records": records(1, "k", 1<<20+1)}), want: "ValidationException"},
		{
			name: "1 MiB of data and a partition key", target: "PutRecords", body: constant(map[string]any{"StreamName": stream, "Records": records(1, "k", 1<<20)}), want: "ValidationException",
			kinesaliteDiffers: "kinesalite limits Data alone to 1 MiB; AWS counts the partition key in a record's 1 MiB (API_PutRecords: \"Each record in the request can be as large as 1 MiB\", with its partition key)",
		},
		{
			name: "over 5 MiB in all", target: "PutRecords", body: constant(map[string]any{"StreamName": stream, "Records": append(records(5, "k", 1<<20-10), records(1, "k", 100<<10)...)}), want: "InvalidArgumentException",
			kinesaliteDiffers: "kinesalite does not check the 5 MiB of a call (only a 7 MiB body); AWS answers 400 InvalidArgumentException \"Records size exceeds 5 MB limit\"",
		},
		{name: "an empty partition key", target: "PutRecords", body: constant(map[string]any{"StreamName": stream, "Records": records(1, "", 10)}), want: "ValidationException"},
		{name: "a partition key of 257 characters", target: "PutRecords", body: constant(map[string]any{"StreamName": stream, "Records": records(1, strings.Repeat("k", 257), 10)}), want: "ValidationException"},
		{name: "501 records", target: "PutRecords", body: constant(map[string]any{"StreamName": stream, "Records": records(501, "k", 1)}), want: "ValidationException"},
		{name: "iterator at trim horizon", target: "GetShardIterator", body: func(b *backend) any {
			return map[string]any{"StreamName": stream, "ShardId": b.shardID, "ShardIteratorType": "TRIM_HORIZON"}
		}, save: func(b *backend, a rawResponse) { b.iterator = a.Body["ShardIterator"].(string) }},
		{name: "get records", target: "GetRecords", body: func(b *backend) any { return map[string]any{"ShardIterator": b.iterator} }},
		{name: "iterator at a sequence number", target: "GetShardIterator", body: func(b *backend) any {
			return map[string]any{"StreamName": stream, "ShardId": b.shardID, "ShardIteratorType": "AT_SEQUENCE_NUMBER", "StartingSequenceNumber": b.seq}
		}},
		{name: "iterator after a sequence number", target: "GetShardIterator", body: func(b *backend) any {
			return map[string]any{"StreamName": stream, "ShardId": b.shardID, "ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "StartingSequenceNumber": b.seq}
		}},
		{name: "iterator at latest", target: "GetShardIterator", body: func(b *backend) any {
			return map[string]any{"StreamName": stream, "ShardId": b.shardID, "ShardIteratorType": "LATEST"}
		}},
		{name: "iterator at a timestamp", target: "GetShardIterator", body: func(b *backend) any {
			return map[string]any{"StreamName": stream, "ShardId": b.shardID, "ShardIteratorType": "AT_TIMESTAMP", "Timestamp": float64(time.Now().Add(-time.Minute).Unix())}
		}},
		{
			name: "iterator at a timestamp after every record", target: "GetShardIterator", want: "",
			body: func(b *backend) any {
				return map[string]any{"StreamName": stream, "ShardId": b.shardID, "ShardIteratorType": "AT_TIMESTAMP", "Timestamp": float64(time.Now().Unix())}
			},
			kinesaliteDiffers: "kinesalite never answers AT_TIMESTAMP when no record of the shard is at or after the timestamp; AWS answers an iterator at the shard's tip",
		},
		{name: "an unknown shard", target: "GetShardIterator", body: constant(map[string]any{"StreamName": stream, "ShardId": "shardId-000000000099", "ShardIteratorType": "LATEST"}), want: "ResourceNotFoundException"},
		{name: "a bad iterator", target: "GetRecords", body: constant(map[string]any{"ShardIterator": "bm90IGFuIGl0ZXJhdG9y"}), want: "InvalidArgumentException"},
		{name: "describe a missing stream", target: "DescribeStreamSummary", body: constant(map[string]any{"StreamName": "missing"}), want: "ResourceNotFoundException"},
		{name: "put to a missing stream", target: "PutRecords", body: constant(map[string]any{"StreamName": "missing", "Records": records(1, "k", 1)}), want: "ResourceNotFoundException"},
		{name: "iterator of a missing stream", target: "GetShardIterator", body: constant(map[string]any{"StreamName": "missing", "ShardId": "shardId-000000000000", "ShardIteratorType": "LATEST"}), want: "ResourceNotFoundException"},
		{
			name: "describe by StreamARN", target: "DescribeStreamSummary", body: constant(map[string]any{"StreamARN": kinesalitetest.StreamARN(stream)}),
			kinesaliteDiffers: "kinesalite predates StreamARN (2022) and requires StreamName; AWS takes either (API_DescribeStreamSummary)",
		},
		{name: "no Authorization header", target: "ListShards", header: http.Header{"Authorization": {}}, body: constant(map[string]any{"StreamName": stream}), want: "MissingAuthenticationTokenException"},
		{name: "an Authorization header without Signature", target: "ListShards", header: http.Header{"Authorization": {"AWS4-HMAC-SHA256 Credential=AK/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host"}}, body: constant(map[string]any{"StreamName": stream}), want: "IncompleteSignatureException"},
		{name: "an unknown operation", target: "NoSuchOperation", body: constant(map[string]any{}), want: "UnknownOperationException"},
	}

	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			answers := make([]rawResponse, len(backends))
			for _, b := range backends {
				b.page = ""
			}
			for i, b := range backends {
				timeout := time.Minute
				if step.kinesaliteDiffers != "" && b.name != "emulator" {
					timeout = 2 * time.Second // kinesalite may never answer; the emulator must, however loaded the machine
				}
				answer, err := rawTry(b.endpoint, "Kinesis_20131202."+step.target, step.body(b), step.header, timeout)
				if err != nil && (b.name == "emulator" || step.kinesaliteDiffers == "") {
					t.Fatalf("%s: %v", b.name, err)
				}
				answers[i] = answer
				if err != nil {
					answers[i] = rawResponse{Body: map[string]any{"__type": "(no answer)", "message": err.Error()}}
				}
				if step.save != nil && answers[i].Status == http.StatusOK {
					step.save(b, answers[i])
				}
			}
			ours, theirs := answers[0], answers[1]
			if got := ours.Body["__type"]; (step.want == "" && ours.Status != http.StatusOK) || (step.want != "" && got != step.want) {
				t.Fatalf("emulator answered %d %v, want %s", ours.Status, ours.Body["__type"], orOK(step.want))
			}
			if step.kinesaliteDiffers != "" {
				t.Logf("kinesalite answers %d %v (%v), not AWS's %s: %s", theirs.Status, theirs.Body["__type"], theirs.Body["message"], orOK(step.want), step.kinesaliteDiffers)
				return
			}
			if ours.Status != theirs.Status || ours.Body["__type"] != theirs.Body["__type"] {
				t.Fatalf("emulator answered %d %v (%v), kinesalite %d %v (%v)", ours.Status, ours.Body["__type"], ours.Body["message"], theirs.Status, theirs.Body["__type"], theirs.Body["message"])
			}
			o, k := shape(ours.Body), shape(theirs.Body)
			o = slices.DeleteFunc(o, func(path string) bool { return slices.Contains(step.kinesaliteLacks, path) })
			if !slices.Equal(o, k) {
				t.Errorf("answers differ in shape:\nemulator:   %v\nkinesalite: %v", o, k)
			}
			if backends[0].page != backends[1].page {
				t.Errorf("pages differ: emulator %s, kinesalite %s", backends[0].page, backends[1].page)
			}
		})
	}
}

func orOK(code string) string {
	if code == "" {
		return "200"
	}
	return code
}

// shape returns the field paths of a JSON answer, array members merged
// ("Records[].SequenceNumber"), sorted; an error's message is left out.
func shape(body map[string]any) []string {
	paths := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if prefix == "" && k == "message" {
					continue
				}
				path := k
				if prefix != "" {
					path = prefix + "." + k
				}
				paths[path] = true
				walk(path, child)
			}
		case []any:
			for _, child := range v {
				walk(prefix+"[]", child)
			}
		}
	}
	walk("", body)
	out := make([]string, 0, len(paths))
	for p := range paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
