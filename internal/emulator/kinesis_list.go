package emulator

import (
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// listStreamsPage is the default and most streams of a ListStreams answer
// (API_ListStreams: "If you specify a value greater than 100, at most 100
// results are returned").
const listStreamsPage = 100

// describeStreamPage is the default and most shards of a DescribeStream
// answer (API_DescribeStream: Limit "The default value is 100. If you
// specify a value greater than 100, at most 100 results are returned").
const describeStreamPage = 100

type listStreamsInput struct {
	ExclusiveStartStreamName string `json:"ExclusiveStartStreamName"`
	Limit                    *int   `json:"Limit"`
	NextToken                string `json:"NextToken"`
}

// streamSummary is a member of ListStreams' StreamSummaries.
type streamSummary struct {
	StreamName              string            `json:"StreamName"`
	StreamARN               string            `json:"StreamARN"`
	StreamStatus            string            `json:"StreamStatus"`
	StreamModeDetails       map[string]string `json:"StreamModeDetails"`
	StreamCreationTimestamp epochSeconds      `json:"StreamCreationTimestamp"`
}

// kinesisListStreams answers ListStreams: the streams by name, a page of
// Limit (at most 100) after ExclusiveStartStreamName or NextToken, with
// HasMoreStreams and, when there are more, a NextToken that names the last
// stream of the page.
func (s *Server) kinesisListStreams(c *call) (any, error) {
	var in listStreamsInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	after := in.ExclusiveStartStreamName
	if after != "" && !kinesisNamePattern.MatchString(after) {
		return nil, constraintError(ServiceKinesis, "'"+after+"'", "exclusiveStartStreamName", "must satisfy regular expression pattern: [a-zA-Z0-9_.-]+ and have length between 1 and 128")
	}
	if in.NextToken != "" {
		if after != "" {
			return nil, clientError("InvalidArgumentException", "NextToken and ExclusiveStartStreamName cannot be provided together.")
		}
		name, ok := parseListToken(in.NextToken)
		if !ok {
			return nil, clientError("InvalidArgumentException", "Invalid NextToken: give the NextToken of the previous ListStreams answer.")
		}
		after = name
	}
	limit, err := listLimit(ServiceKinesis, in.Limit, listStreamsPage)
	if err != nil {
		return nil, err
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	names := make([]string, 0, len(s.kinesis.streams))
	for name := range s.kinesis.streams {
		if name > after {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	out := struct {
		StreamNames     []string        `json:"StreamNames"`
		StreamSummaries []streamSummary `json:"StreamSummaries"`
		HasMoreStreams  bool            `json:"HasMoreStreams"`
		NextToken       string          `json:"NextToken,omitempty"`
	}{StreamNames: []string{}, StreamSummaries: []streamSummary{}}
	if len(names) > limit {
		names = names[:limit]
		out.HasMoreStreams = true
		out.NextToken = listToken(names[len(names)-1])
	}
	for _, name := range names {
		st := s.kinesis.streams[name]
		out.StreamNames = append(out.StreamNames, name)
		out.StreamSummaries = append(out.StreamSummaries, streamSummary{
			StreamName:              st.name,
			StreamARN:               st.arn,
			StreamStatus:            "ACTIVE",
			StreamModeDetails:       map[string]string{"StreamMode": st.mode},
			StreamCreationTimestamp: epochSeconds(st.created),
		})
	}
	return out, nil
}

type describeStreamInput struct {
	streamRef
	ExclusiveStartShardId string `json:"ExclusiveStartShardId"`
	Limit                 *int   `json:"Limit"`
}

// kinesisDescribeStream answers DescribeStream: the stream's summary and a
// page of Limit (at most 100) of its shards after ExclusiveStartShardId,
// with HasMoreShards. Its shards never close, so none has an
// EndingSequenceNumber or a parent.
func (s *Server) kinesisDescribeStream(c *call) (any, error) {
	var in describeStreamInput
	name, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	limit, err := listLimit(ServiceKinesis, in.Limit, describeStreamPage)
	if err != nil {
		return nil, err
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	st, err := s.kinesis.stream(c, name)
	if err != nil {
		return nil, err
	}
	type description struct {
		streamIdentity
		Shards        []shardOutput `json:"Shards"`
		HasMoreShards bool          `json:"HasMoreShards"`
		streamSettings
	}
	identity, settings := st.describe()
	d := description{streamIdentity: identity, Shards: []shardOutput{}, streamSettings: settings}
	first := sort.Search(len(st.shards), func(i int) bool { return st.shards[i].id > in.ExclusiveStartShardId })
	for _, sh := range st.shards[first:] {
		if len(d.Shards) == limit {
			d.HasMoreShards = true
			break
		}
		var o shardOutput
		o.ShardId = sh.id
		o.HashKeyRange.StartingHashKey = sh.startHash
		o.HashKeyRange.EndingHashKey = sh.endHash
		o.SequenceNumberRange.StartingSequenceNumber = sequenceNumber(sh.index, 0)
		d.Shards = append(d.Shards, o)
	}
	return map[string]description{"StreamDescription": d}, nil
}

// listLimit checks the Limit of a list call, in [1, 10000] as the models
// of ListStreams, DescribeStream and ListDeliveryStreams say, and returns
// the page size: Limit, at most page; page when Limit is absent.
func listLimit(svc Service, limit *int, page int) (int, error) {
	if limit == nil {
		return page, nil
	}
	if *limit < 1 || *limit > 10000 {
		return 0, constraintError(svc, fmt.Sprint(*limit), "limit", "must have value less than or equal to 10000 and greater than or equal to 1")
	}
	return min(*limit, page), nil
}

// listTokenPrefix starts the NextToken of ListStreams, before the name of
// the last stream of the page.
const listTokenPrefix = "streams-after:"

// listToken is the NextToken of a ListStreams page ending with stream last.
func listToken(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(listTokenPrefix + last))
}

// parseListToken returns the stream a ListStreams NextToken continues
// after.
func parseListToken(token string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", false
	}
	return strings.CutPrefix(string(raw), listTokenPrefix)
}
