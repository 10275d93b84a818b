package emulator

import (
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Kinesis limits, from the API reference of each call.
const (
	kinesisMaxRecords       = 500
	kinesisMaxRequestBytes  = 5 << 20 // data and partition keys of PutRecords
	kinesisMaxRecordBytes   = 1 << 20 // data and partition key of one record
	kinesisMaxPartitionKey  = 256
	kinesisMaxShards        = 500  // the default shard quota of an account
	kinesisOnDemandShards   = 4    // an on-demand stream starts with 4 shards
	kinesisRetentionHours   = 24   // a stream's retention period when created
	kinesisMaxRetention     = 8760 // hours: 365 days
	kinesisMaxGetRecords    = 10_000
	kinesisMaxGetBytes      = 10 << 20
	kinesisIteratorLifetime = 5 * time.Minute
)

// kinesisNamePattern is a stream name: 1 to 128 of [a-zA-Z0-9_.-].
var kinesisNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)

// kinesisARNPattern is a stream ARN.
var kinesisARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:kinesis:[a-z0-9-]+:\d{12}:stream/([a-zA-Z0-9_.-]{1,128})$`)

// kinesisStore holds the Kinesis streams.
type kinesisStore struct {
	mu      sync.Mutex
	streams map[string]*kinesisStream
}

func newKinesisStore() *kinesisStore {
	return &kinesisStore{streams: map[string]*kinesisStream{}}
}

// kinesisStream is a stream: its shards and the records they keep.
type kinesisStream struct {
	name    string
	arn     string
	mode    string
	created time.Time
	shards  []*kinesisShard
	// retentionHours is its retention period: records older are trimmed.
	retentionHours int
	// stored counts the records and bytes its shards keep.
	storedRecords int
	storedBytes   int64
	// order holds the shard index of each record its shards keep, in the
	// order they were put: the first is the shard of the oldest record.
	order []int32
}

func (s *Server) kinesisOperations() map[string]operation {
	return map[string]operation{
		"CreateStream":          s.kinesisCreateStream,
		"DescribeStreamSummary": s.kinesisDescribeStreamSummary,
		"ListShards":            s.kinesisListShards,
		"PutRecord":             s.kinesisPutRecord,
		"PutRecords":            s.kinesisPutRecords,
		"GetShardIterator":      s.kinesisGetShardIterator,
		"GetRecords":            s.kinesisGetRecords,
		"ListStreams":           s.kinesisListStreams,
		"DescribeStream":        s.kinesisDescribeStream,

		"IncreaseStreamRetentionPeriod": s.kinesisIncreaseStreamRetentionPeriod,
		"DecreaseStreamRetentionPeriod": s.kinesisDecreaseStreamRetentionPeriod,
	}
}

// streamRef is how a call names its stream: StreamName, StreamARN or both.
type streamRef struct {
	StreamName string `json:"StreamName,omitempty"`
	StreamARN  string `json:"StreamARN,omitempty"`
}

// name returns the stream's name, from StreamName or else StreamARN.
func (r streamRef) name() (string, error) {
	if r.StreamARN != "" {
		m := kinesisARNPattern.FindStringSubmatch(r.StreamARN)
		if m == nil {
			return "", constraintError(ServiceKinesis, "'"+r.StreamARN+"'", "streamARN", "must satisfy regular expression pattern: arn:aws.*:kinesis:.*:\\d{12}:stream/\\S+")
		}
		if r.StreamName != "" && r.StreamName != m[1] {
			return "", clientError("InvalidArgumentException", "StreamName %s and StreamARN %s name different streams.", r.StreamName, r.StreamARN)
		}
		return m[1], nil
	}
	if r.StreamName == "" {
		return "", clientError("InvalidArgumentException", "Either StreamName or StreamARN should be provided.")
	}
	if !kinesisNamePattern.MatchString(r.StreamName) {
		return "", constraintError(ServiceKinesis, "'"+r.StreamName+"'", "streamName", "must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
	}
	return r.StreamName, nil
}

// stream returns the stream named name; the store's lock is held.
func (k *kinesisStore) stream(c *call, name string) (*kinesisStream, error) {
	st, ok := k.streams[name]
	if !ok {
		return nil, notFound(c)
	}
	return st, nil
}

// createStream creates a stream of shards shards; the store's lock is held.
func (k *kinesisStore) createStream(name, arn, mode string, shards int, now time.Time) (*kinesisStream, error) {
	if _, ok := k.streams[name]; ok {
		return nil, ErrExists
	}
	st := &kinesisStream{name: name, arn: arn, mode: mode, created: now, retentionHours: kinesisRetentionHours}
	for i := range shards {
		start, end := hashKeyRange(i, shards)
		st.shards = append(st.shards, &kinesisShard{
			index:     i,
			id:        fmt.Sprintf("shardId-%012d", i),
			startHash: start,
			endHash:   end,
			next:      1,
		})
	}
	k.streams[name] = st
	return st, nil
}

// hashKeyRange returns the hash keys of shard i of n, which split the
// 128-bit hash key space evenly: [ceil(i·2¹²⁸/n), ceil((i+1)·2¹²⁸/n) − 1],
// so that the shard of hash key h is floor(h·n/2¹²⁸).
func hashKeyRange(i, n int) (start, end string) {
	space := new(big.Int).Lsh(big.NewInt(1), 128)
	ceilDiv := func(k int) *big.Int {
		num := new(big.Int).Mul(space, big.NewInt(int64(k)))
		num.Add(num, big.NewInt(int64(n-1)))
		return num.Div(num, big.NewInt(int64(n)))
	}
	return ceilDiv(i).String(), new(big.Int).Sub(ceilDiv(i+1), big.NewInt(1)).String()
}

type createStreamInput struct {
	StreamName        string `json:"StreamName"`
	ShardCount        *int   `json:"ShardCount"`
	StreamModeDetails *struct {
		StreamMode string `json:"StreamMode"`
	} `json:"StreamModeDetails"`
}

func (s *Server) kinesisCreateStream(c *call) (any, error) {
	var in createStreamInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if !kinesisNamePattern.MatchString(in.StreamName) {
		return nil, constraintError(ServiceKinesis, "'"+in.StreamName+"'", "streamName", "must satisfy regular expression pattern: [a-zA-Z0-9_.-]+ and have length between 1 and 128")
	}
	if err := c.enter(in.StreamName); err != nil {
		return nil, err
	}
	mode := "PROVISIONED"
	if in.ShardCount == nil {
		mode = "ON_DEMAND"
	}
	if in.StreamModeDetails != nil && in.StreamModeDetails.StreamMode != "" {
		mode = in.StreamModeDetails.StreamMode
	}
	if mode != "PROVISIONED" && mode != "ON_DEMAND" {
		return nil, constraintError(ServiceKinesis, "'"+mode+"'", "streamModeDetails.streamMode", "must satisfy enum value set: [ON_DEMAND, PROVISIONED]")
	}
	shards := kinesisOnDemandShards
	switch {
	case in.ShardCount != nil && *in.ShardCount < 1:
		return nil, constraintError(ServiceKinesis, fmt.Sprint(*in.ShardCount), "shardCount", "must have value greater than or equal to 1")
	case in.ShardCount != nil && mode == "ON_DEMAND":
		return nil, clientError("ValidationException", "ShardCount must not be specified for an ON_DEMAND stream.")
	case in.ShardCount != nil:
		shards = *in.ShardCount
	case mode == "PROVISIONED" && in.StreamModeDetails != nil:
		return nil, clientError("InvalidArgumentException", "ShardCount is required for a PROVISIONED stream.")
	}
	if shards > kinesisMaxShards {
		return nil, clientError("LimitExceededException", "This request would exceed the shard limit for the account %s in %s. Current shard count for the account: 0. Limit: %d. Number of additional shards that would have resulted from this request: %d.", s.cfg.AccountID, c.region, kinesisMaxShards, shards)
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	if _, err := s.kinesis.createStream(in.StreamName, c.arn("stream/"+in.StreamName), mode, shards, s.now()); err != nil {
		return nil, clientError("ResourceInUseException", "Stream %s under account %s already exists.", in.StreamName, s.cfg.AccountID)
	}
	return nil, nil
}

func (s *Server) kinesisDescribeStreamSummary(c *call) (any, error) {
	var in streamRef
	name, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	st, err := s.kinesis.stream(c, name)
	if err != nil {
		return nil, err
	}
	type summary struct {
		streamIdentity
		streamSettings
		OpenShardCount int `json:"OpenShardCount"`
		ConsumerCount  int `json:"ConsumerCount"`
	}
	identity, settings := st.describe()
	return map[string]summary{"StreamDescriptionSummary": {
		streamIdentity: identity,
		streamSettings: settings,
		OpenShardCount: len(st.shards),
		ConsumerCount:  0,
	}}, nil
}

// streamIdentity is what DescribeStreamSummary and DescribeStream both say
// of a stream first, before its counts of shards or its shards.
type streamIdentity struct {
	StreamName        string            `json:"StreamName"`
	StreamARN         string            `json:"StreamARN"`
	StreamStatus      string            `json:"StreamStatus"`
	StreamModeDetails map[string]string `json:"StreamModeDetails"`
}

// streamSettings is what DescribeStreamSummary and DescribeStream both say
// of a stream after its identity, or after its shards.
type streamSettings struct {
	RetentionPeriodHours    int          `json:"RetentionPeriodHours"`
	StreamCreationTimestamp epochSeconds `json:"StreamCreationTimestamp"`
	EnhancedMonitoring      []monitoring `json:"EnhancedMonitoring"`
	EncryptionType          string       `json:"EncryptionType"`
}

// monitoring is a stream's enhanced monitoring: none in the emulator.
type monitoring struct {
	ShardLevelMetrics []string `json:"ShardLevelMetrics"`
}

// describe returns what DescribeStreamSummary and DescribeStream both say
// of the stream: it is active, keeps records its retention period (trim), has no
// enhanced monitoring and no encryption.
func (st *kinesisStream) describe() (streamIdentity, streamSettings) {
	return streamIdentity{
			StreamName:        st.name,
			StreamARN:         st.arn,
			StreamStatus:      "ACTIVE",
			StreamModeDetails: map[string]string{"StreamMode": st.mode},
		}, streamSettings{
			RetentionPeriodHours:    st.retentionHours,
			StreamCreationTimestamp: epochSeconds(st.created),
			EnhancedMonitoring:      []monitoring{{ShardLevelMetrics: []string{}}},
			EncryptionType:          "NONE",
		}
}

type listShardsInput struct {
	streamRef
	NextToken               string `json:"NextToken"`
	ExclusiveStartShardId   string `json:"ExclusiveStartShardId"`
	MaxResults              *int   `json:"MaxResults"`
	StreamCreationTimestamp *epochSeconds
}

type shardOutput struct {
	ShardId      string `json:"ShardId"`
	HashKeyRange struct {
		StartingHashKey string `json:"StartingHashKey"`
		EndingHashKey   string `json:"EndingHashKey"`
	} `json:"HashKeyRange"`
	SequenceNumberRange struct {
		StartingSequenceNumber string `json:"StartingSequenceNumber"`
	} `json:"SequenceNumberRange"`
}

// listShardsPage is the default and most shards of a ListShards answer.
const listShardsPage = 1000

func (s *Server) kinesisListShards(c *call) (any, error) {
	var in listShardsInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	after := in.ExclusiveStartShardId
	if in.NextToken != "" {
		if in.StreamName != "" || in.StreamARN != "" {
			return nil, clientError("InvalidArgumentException", "NextToken and StreamName cannot be provided together.")
		}
		var ok bool
		in.StreamName, after, ok = strings.Cut(in.NextToken, "|")
		if !ok {
			return nil, clientError("InvalidArgumentException", "Invalid NextToken.")
		}
	}
	name, err := in.name()
	if err != nil {
		return nil, err
	}
	limit := listShardsPage
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 10000 {
			return nil, constraintError(ServiceKinesis, fmt.Sprint(*in.MaxResults), "maxResults", "must have value between 1 and 10000")
		}
		limit = min(*in.MaxResults, listShardsPage)
	}
	if err := c.enter(name); err != nil {
		return nil, err
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	st, err := s.kinesis.stream(c, name)
	if err != nil {
		return nil, err
	}
	first := sort.Search(len(st.shards), func(i int) bool { return st.shards[i].id > after })
	out := struct {
		Shards    []shardOutput `json:"Shards"`
		NextToken string        `json:"NextToken,omitempty"`
	}{Shards: []shardOutput{}}
	for _, sh := range st.shards[first:] {
		if len(out.Shards) == limit {
			out.NextToken = name + "|" + out.Shards[len(out.Shards)-1].ShardId
			break
		}
		var o shardOutput
		o.ShardId = sh.id
		o.HashKeyRange.StartingHashKey = sh.startHash
		o.HashKeyRange.EndingHashKey = sh.endHash
		o.SequenceNumberRange.StartingSequenceNumber = sequenceNumber(sh.index, 0)
		out.Shards = append(out.Shards, o)
	}
	return out, nil
}

// autoCreateStream returns the stream named name, creating it with one
// shard when Config.AutoCreate says so; the store's lock is held.
func (s *Server) autoCreateStream(c *call, name string) (*kinesisStream, error) {
	st, err := s.kinesis.stream(c, name)
	if err == nil || !s.cfg.AutoCreate {
		return st, err
	}
	s.log.Info("emulator: creating a Kinesis stream on its first put", "stream", name)
	return s.kinesis.createStream(name, c.arn("stream/"+name), "PROVISIONED", 1, s.now())
}
