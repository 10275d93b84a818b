package emulator

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// kinesisShard is a shard and the records it keeps, oldest first; their
// counters are consecutive, from 1, and a record's sequence number is made
// of its shard's index and its counter.
type kinesisShard struct {
	index              int
	id                 string
	startHash, endHash string
	records            []kinesisRecord
	next               uint64 // the counter of the next record put
}

type kinesisRecord struct {
	counter      uint64
	partitionKey string
	data         []byte
	arrival      time.Time
}

// sequenceNumber is the sequence number of record counter of shard index:
// 38 decimal digits, so that those of a shard sort as numbers and as
// strings. Counter 0 is the shard's starting sequence number.
func sequenceNumber(shard int, counter uint64) string {
	return fmt.Sprintf("49%06d%030d", shard, counter)
}

// parseSequenceNumber returns the shard index and counter of a sequence
// number of sequenceNumber's.
func parseSequenceNumber(seq string) (shard int, counter uint64, ok bool) {
	if len(seq) != 38 || !strings.HasPrefix(seq, "49") {
		return 0, 0, false
	}
	shard, err := strconv.Atoi(seq[2:8])
	if err != nil {
		return 0, 0, false
	}
	counter, err = strconv.ParseUint(seq[8:], 10, 64)
	return shard, counter, err == nil
}

// shardOf returns the index of the shard, of n, of a 128-bit hash key:
// floor(hash·n / 2¹²⁸), as hashKeyRange splits them.
func shardOf(hi, lo uint64, n int) int {
	top, mid := bits.Mul64(hi, uint64(n))
	carryHi, _ := bits.Mul64(lo, uint64(n))
	_, carry := bits.Add64(mid, carryHi, 0)
	return int(top + carry)
}

// partitionHash is the hash key of a partition key: its MD5 as a 128-bit
// number.
func partitionHash(key string) (hi, lo uint64) {
	sum := md5.Sum([]byte(key))
	return binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:])
}

// maxHashKey is 2¹²⁸ − 1.
var maxHashKey = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))

// explicitHash parses an ExplicitHashKey.
func explicitHash(key string) (hi, lo uint64, err error) {
	n, ok := new(big.Int).SetString(key, 10)
	if !ok || n.Sign() < 0 || n.Cmp(maxHashKey) > 0 {
		return 0, 0, clientError("InvalidArgumentException", "Invalid ExplicitHashKey. ExplicitHashKey must be in the range: [0, 2^128-1]. Specified value was %s", key)
	}
	var buf [16]byte
	n.FillBytes(buf[:])
	return binary.BigEndian.Uint64(buf[:8]), binary.BigEndian.Uint64(buf[8:]), nil
}

// putRecordEntry is a record of PutRecord or PutRecords.
type putRecordEntry struct {
	Data            []byte  `json:"Data"`
	PartitionKey    string  `json:"PartitionKey"`
	ExplicitHashKey *string `json:"ExplicitHashKey"`
}

// checkRecord checks a record against Kinesis' limits and returns its hash
// key; path is its place in the request ("records.3.member" or "").
func checkRecord(r putRecordEntry, path string) (hi, lo uint64, err error) {
	if n := utf8.RuneCountInString(r.PartitionKey); n < 1 || n > kinesisMaxPartitionKey {
		constraint := "must have length greater than or equal to 1"
		if n > 0 {
			constraint = "must have length less than or equal to 256"
		}
		return 0, 0, constraintError(ServiceKinesis, "'"+r.PartitionKey+"'", path+"partitionKey", constraint)
	}
	if r.Data == nil {
		return 0, 0, constraintError(ServiceKinesis, "null", path+"data", "must not be null")
	}
	if len(r.Data)+len(r.PartitionKey) > kinesisMaxRecordBytes {
		return 0, 0, constraintError(ServiceKinesis, fmt.Sprintf("'java.nio.HeapByteBuffer[pos=0 lim=%d cap=%d]'", len(r.Data), len(r.Data)), path+"data",
			"must have length less than or equal to 1048576 (with the partition key's "+strconv.Itoa(len(r.PartitionKey))+" bytes)")
	}
	if r.ExplicitHashKey != nil {
		return explicitHash(*r.ExplicitHashKey)
	}
	hi, lo = partitionHash(r.PartitionKey)
	return hi, lo, nil
}

// putRecordResult is the result of one record of PutRecords.
type putRecordResult struct {
	SequenceNumber string `json:"SequenceNumber,omitempty"`
	ShardId        string `json:"ShardId,omitempty"`
	ErrorCode      string `json:"ErrorCode,omitempty"`
	ErrorMessage   string `json:"ErrorMessage,omitempty"`
}

// put stores a record in its shard, dropping the stream's records past
// its retention and its oldest past the server's bounds; the store's lock
// is held.
func (s *Server) kinesisPut(st *kinesisStream, sh *kinesisShard, r putRecordEntry, now time.Time) putRecordResult {
	counter := sh.next
	sh.next++
	record := kinesisRecord{counter: counter, partitionKey: r.PartitionKey, data: r.Data, arrival: now}
	sh.records = append(sh.records, record)
	st.order = append(st.order, int32(sh.index))
	st.storedRecords++
	st.storedBytes += record.size()
	st.trim(now, s.bounds())
	return putRecordResult{SequenceNumber: sequenceNumber(sh.index, counter), ShardId: sh.id}
}

type putRecordsInput struct {
	streamRef
	Records []putRecordEntry `json:"Records"`
}

func (s *Server) kinesisPutRecords(c *call) (any, error) {
	var in putRecordsInput
	name, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	switch n := len(in.Records); {
	case n == 0:
		return nil, constraintError(ServiceKinesis, "'[]'", "records", "must have length greater than or equal to 1")
	case n > kinesisMaxRecords:
		return nil, constraintError(ServiceKinesis, fmt.Sprintf("'[%d records]'", n), "records", "must have length less than or equal to 500")
	}
	type hashKey struct{ hi, lo uint64 }
	hashes := make([]hashKey, len(in.Records))
	total := 0
	for i, r := range in.Records {
		hi, lo, err := checkRecord(r, fmt.Sprintf("records.%d.member.", i+1))
		if err != nil {
			return nil, err
		}
		hashes[i] = hashKey{hi, lo}
		total += len(r.Data) + len(r.PartitionKey)
	}
	if total > kinesisMaxRequestBytes {
		return nil, clientError("InvalidArgumentException", "Records size exceeds 5 MB limit")
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	st, err := s.autoCreateStream(c, name)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := struct {
		FailedRecordCount int               `json:"FailedRecordCount"`
		Records           []putRecordResult `json:"Records"`
	}{Records: make([]putRecordResult, len(in.Records))}
	for i, r := range in.Records {
		sh := st.shards[shardOf(hashes[i].hi, hashes[i].lo, len(st.shards))]
		if code, msg := c.fault.recordFault(c, sh.id); code != "" {
			out.Records[i] = putRecordResult{ErrorCode: code, ErrorMessage: msg}
			out.FailedRecordCount++
			continue
		}
		out.Records[i] = s.kinesisPut(st, sh, r, now)
	}
	c.accepted, c.failed = len(in.Records)-out.FailedRecordCount, out.FailedRecordCount
	return out, nil
}

type putRecordInput struct {
	streamRef
	putRecordEntry
	SequenceNumberForOrdering string `json:"SequenceNumberForOrdering"`
}

func (s *Server) kinesisPutRecord(c *call) (any, error) {
	var in putRecordInput
	name, err := c.decodeResource(&in)
	if err != nil {
		return nil, err
	}
	hi, lo, err := checkRecord(in.putRecordEntry, "")
	if err != nil {
		return nil, err
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	st, err := s.autoCreateStream(c, name)
	if err != nil {
		return nil, err
	}
	sh := st.shards[shardOf(hi, lo, len(st.shards))]
	if code, msg := c.fault.recordFault(c, sh.id); code != "" {
		if code == "InternalFailure" {
			return nil, internalFailure()
		}
		return nil, clientError(code, "%s", msg)
	}
	c.accepted = 1
	return s.kinesisPut(st, sh, in.putRecordEntry, s.now()), nil
}

type getShardIteratorInput struct {
	streamRef
	ShardId                string        `json:"ShardId"`
	ShardIteratorType      string        `json:"ShardIteratorType"`
	StartingSequenceNumber string        `json:"StartingSequenceNumber"`
	Timestamp              *epochSeconds `json:"Timestamp"`
}

func (s *Server) kinesisGetShardIterator(c *call) (any, error) {
	var in getShardIteratorInput
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
	var sh *kinesisShard
	for _, candidate := range st.shards {
		if candidate.id == in.ShardId {
			sh = candidate
		}
	}
	if sh == nil {
		return nil, clientError("ResourceNotFoundException", "Shard %s in stream %s under account %s does not exist", in.ShardId, name, s.cfg.AccountID)
	}
	now := s.now()
	st.trim(now, s.bounds())
	var position uint64
	switch in.ShardIteratorType {
	case "TRIM_HORIZON":
		position = sh.first()
	case "LATEST":
		position = sh.next
	case "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER":
		index, counter, ok := parseSequenceNumber(in.StartingSequenceNumber)
		if !ok || index != sh.index || counter >= sh.next {
			return nil, clientError("InvalidArgumentException", "StartingSequenceNumber %s used in GetShardIterator on shard %s in stream %s under account %s is invalid.", in.StartingSequenceNumber, sh.id, name, s.cfg.AccountID)
		}
		position = counter
		if in.ShardIteratorType == "AFTER_SEQUENCE_NUMBER" {
			position++
		}
	case "AT_TIMESTAMP":
		if in.Timestamp == nil {
			return nil, clientError("InvalidArgumentException", "Must specify timestampInMillis parameter for iterator of type AT_TIMESTAMP. Current request has no timestamp parameter.")
		}
		at := time.Time(*in.Timestamp)
		if at.After(now) {
			return nil, clientError("InvalidArgumentException", "The timestampInMillis parameter cannot be greater than the currentTimestampInMillis. timestampInMillis: %d, currentTimestampInMillis: %d", at.UnixMilli(), now.UnixMilli())
		}
		i := sort.Search(len(sh.records), func(i int) bool { return !sh.records[i].arrival.Before(at) })
		position = sh.next
		if i < len(sh.records) {
			position = sh.records[i].counter
		}
	default:
		return nil, constraintError(ServiceKinesis, "'"+in.ShardIteratorType+"'", "shardIteratorType", "must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, AT_TIMESTAMP, AT_SEQUENCE_NUMBER, TRIM_HORIZON]")
	}
	return map[string]string{"ShardIterator": encodeIterator(name, sh.index, position, now)}, nil
}

// first returns the counter of the oldest record the shard keeps, or of the
// next one when it keeps none.
func (sh *kinesisShard) first() uint64 {
	if len(sh.records) == 0 {
		return sh.next
	}
	return sh.records[0].counter
}

// encodeIterator makes a shard iterator: where to read from, and when it
// was made, for its expiry.
func encodeIterator(stream string, shard int, position uint64, issued time.Time) string {
	raw := fmt.Sprintf("%s\x00%d\x00%d\x00%d", stream, shard, position, issued.UnixMilli())
	return base64.StdEncoding.EncodeToString([]byte(raw))
}

// decodeIterator reads a shard iterator of encodeIterator's.
func decodeIterator(iterator string) (stream string, shard int, position uint64, issued time.Time, err error) {
	invalid := clientError("InvalidArgumentException", "Invalid ShardIterator.")
	raw, decodeErr := base64.StdEncoding.DecodeString(iterator)
	parts := strings.Split(string(raw), "\x00")
	if decodeErr != nil || len(parts) != 4 {
		return "", 0, 0, time.Time{}, invalid
	}
	shard, err1 := strconv.Atoi(parts[1])
	position, err2 := strconv.ParseUint(parts[2], 10, 64)
	ms, err3 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return "", 0, 0, time.Time{}, invalid
	}
	return parts[0], shard, position, time.UnixMilli(ms), nil
}

type getRecordsInput struct {
	ShardIterator string `json:"ShardIterator"`
	Limit         *int   `json:"Limit"`
	StreamARN     string `json:"StreamARN"`
}

type getRecordsRecord struct {
	SequenceNumber              string       `json:"SequenceNumber"`
	ApproximateArrivalTimestamp epochSeconds `json:"ApproximateArrivalTimestamp"`
	Data                        []byte       `json:"Data"`
	PartitionKey                string       `json:"PartitionKey"`
}

func (s *Server) kinesisGetRecords(c *call) (any, error) {
	var in getRecordsInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if n := len(in.ShardIterator); n < 1 || n > 512 {
		return nil, constraintError(ServiceKinesis, "'"+in.ShardIterator+"'", "shardIterator", "must have length between 1 and 512")
	}
	limit := kinesisMaxGetRecords
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > kinesisMaxGetRecords {
			return nil, constraintError(ServiceKinesis, fmt.Sprint(*in.Limit), "limit", "must have value between 1 and 10000")
		}
		limit = *in.Limit
	}
	name, index, position, issued, err := decodeIterator(in.ShardIterator)
	if err != nil {
		return nil, err
	}
	if err := c.enter(name); err != nil {
		return nil, err
	}
	now := s.now()
	if now.Sub(issued) > kinesisIteratorLifetime {
		return nil, clientError("ExpiredIteratorException", "Iterator expired. The iterator was created at time %s while right now it is %s which is further in the future than the tolerated delay of 300000 milliseconds.",
			issued.UTC().Format(time.UnixDate), now.UTC().Format(time.UnixDate))
	}
	s.kinesis.mu.Lock()
	defer s.kinesis.mu.Unlock()
	st, err := s.kinesis.stream(c, name)
	if err != nil {
		return nil, err
	}
	if index >= len(st.shards) {
		return nil, clientError("ResourceNotFoundException", "Shard shardId-%012d in stream %s under account %s does not exist", index, name, s.cfg.AccountID)
	}
	st.trim(now, s.bounds())
	sh := st.shards[index]
	// An iterator at a record trimmed since reads from the oldest kept,
	// the trim horizon, as Kinesis' does.
	position = max(position, sh.first())
	out := struct {
		Records            []getRecordsRecord `json:"Records"`
		NextShardIterator  string             `json:"NextShardIterator"`
		MillisBehindLatest int64              `json:"MillisBehindLatest"`
	}{Records: []getRecordsRecord{}}
	size := 0
	for i := int(position - sh.first()); i < len(sh.records) && len(out.Records) < limit; i++ {
		r := sh.records[i]
		if size > 0 && size+len(r.data) > kinesisMaxGetBytes {
			break
		}
		size += len(r.data)
		out.Records = append(out.Records, getRecordsRecord{
			SequenceNumber:              sequenceNumber(sh.index, r.counter),
			ApproximateArrivalTimestamp: epochSeconds(r.arrival),
			Data:                        r.data,
			PartitionKey:                r.partitionKey,
		})
		position = r.counter + 1
	}
	if i := int(position - sh.first()); i < len(sh.records) {
		out.MillisBehindLatest = max(0, now.Sub(sh.records[i].arrival).Milliseconds())
	}
	out.NextShardIterator = encodeIterator(name, sh.index, position, now)
	return out, nil
}
