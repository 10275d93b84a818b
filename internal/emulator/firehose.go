package emulator

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"sync"
	"time"
)

// Firehose limits, from the API reference of PutRecordBatch.
const (
	firehoseMaxRecords      = 500
	firehoseMaxRequestBytes = 4 << 20
	firehoseMaxRecordBytes  = 1000 << 10
)

// firehoseNamePattern is a delivery stream name: 1 to 64 of [a-zA-Z0-9_.-].
var firehoseNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)

// FirehoseRecord is a record a delivery stream received: what Firehose
// would deliver to its destination.
type FirehoseRecord struct {
	RecordID string    `json:"record_id"`
	Data     []byte    `json:"data"`
	Arrival  time.Time `json:"arrival_time"`
}

// firehoseStore holds the delivery streams.
type firehoseStore struct {
	mu      sync.Mutex
	streams map[string]*deliveryStream
}

func newFirehoseStore() *firehoseStore {
	return &firehoseStore{streams: map[string]*deliveryStream{}}
}

// deliveryStream is a delivery stream and the records it keeps, oldest
// first.
type deliveryStream struct {
	name        string
	arn         string
	kind        string
	created     time.Time
	records     []FirehoseRecord
	storedBytes int64
	// dropped counts the records dropped past their retention or the
	// server's bounds.
	dropped int64
	// idPrefix and puts make record ids.
	idPrefix string
	puts     uint64
}

func (s *Server) firehoseOperations() map[string]operation {
	return map[string]operation{
		"CreateDeliveryStream":   s.firehoseCreateDeliveryStream,
		"DescribeDeliveryStream": s.firehoseDescribeDeliveryStream,
		"PutRecord":              s.firehosePutRecord,
		"PutRecordBatch":         s.firehosePutRecordBatch,
		"ListDeliveryStreams":    s.firehoseListDeliveryStreams,
	}
}

// deliveryStreamTypes are the values of DeliveryStreamType.
var deliveryStreamTypes = []string{"DirectPut", "KinesisStreamAsSource", "MSKAsSource", "DatabaseAsSource"}

// checkDeliveryStreamName checks a DeliveryStreamName.
func checkDeliveryStreamName(name string) error {
	if !firehoseNamePattern.MatchString(name) {
		return constraintError(ServiceFirehose, "'"+name+"'", "deliveryStreamName", "must satisfy regular expression pattern: [a-zA-Z0-9_.-]+ and have length between 1 and 64")
	}
	return nil
}

// create creates a delivery stream; the store's lock is held.
func (f *firehoseStore) create(name, arn, kind string, now time.Time) (*deliveryStream, error) {
	if _, ok := f.streams[name]; ok {
		return nil, ErrExists
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	ds := &deliveryStream{name: name, arn: arn, kind: kind, created: now, idPrefix: fmt.Sprintf("%08x", h.Sum32())}
	f.streams[name] = ds
	return ds, nil
}

// stream returns the delivery stream named name, creating it when
// Config.AutoCreate says so and create is true; the store's lock is held.
func (s *Server) deliveryStream(c *call, name string, create bool) (*deliveryStream, error) {
	if ds, ok := s.firehose.streams[name]; ok {
		return ds, nil
	}
	if !create || !s.cfg.AutoCreate {
		return nil, notFound(c)
	}
	s.log.Info("emulator: creating a Firehose delivery stream on its first put", "delivery_stream", name)
	return s.firehose.create(name, c.arn("deliverystream/"+name), "DirectPut", s.now())
}

// put stores a record, dropping those past their retention and the
// oldest past the server's bounds; the store's lock is held.
func (s *Server) firehosePut(ds *deliveryStream, data []byte, now time.Time) string {
	ds.puts++
	id := fmt.Sprintf("%s%024d", ds.idPrefix, ds.puts)
	ds.records = append(ds.records, FirehoseRecord{RecordID: id, Data: data, Arrival: now})
	ds.storedBytes += int64(len(data))
	ds.trim(now, s.bounds())
	return id
}

type createDeliveryStreamInput struct {
	DeliveryStreamName string `json:"DeliveryStreamName"`
	DeliveryStreamType string `json:"DeliveryStreamType"`
}

func (in createDeliveryStreamInput) name() (string, error) {
	return in.DeliveryStreamName, checkDeliveryStreamName(in.DeliveryStreamName)
}

func (s *Server) firehoseCreateDeliveryStream(c *call) (any, error) {
	var in createDeliveryStreamInput
	if _, err := c.decodeResource(&in); err != nil {
		return nil, err
	}
	kind := in.DeliveryStreamType
	if kind == "" {
		kind = "DirectPut"
	}
	if !slices.Contains(deliveryStreamTypes, kind) {
		return nil, constraintError(ServiceFirehose, "'"+kind+"'", "deliveryStreamType", "must satisfy enum value set: [DirectPut, KinesisStreamAsSource, MSKAsSource, DatabaseAsSource]")
	}
	s.firehose.mu.Lock()
	defer s.firehose.mu.Unlock()
	ds, err := s.firehose.create(in.DeliveryStreamName, c.arn("deliverystream/"+in.DeliveryStreamName), kind, s.now())
	if err != nil {
		return nil, clientError("ResourceInUseException", "Firehose %s under accountId %s already exists", in.DeliveryStreamName, s.cfg.AccountID)
	}
	return map[string]string{"DeliveryStreamARN": ds.arn}, nil
}

type describeDeliveryStreamInput struct {
	DeliveryStreamName string `json:"DeliveryStreamName"`
}

func (in describeDeliveryStreamInput) name() (string, error) {
	return in.DeliveryStreamName, checkDeliveryStreamName(in.DeliveryStreamName)
}

func (s *Server) firehoseDescribeDeliveryStream(c *call) (any, error) {
	var in describeDeliveryStreamInput
	if _, err := c.decodeResource(&in); err != nil {
		return nil, err
	}
	s.firehose.mu.Lock()
	defer s.firehose.mu.Unlock()
	ds, err := s.deliveryStream(c, in.DeliveryStreamName, false)
	if err != nil {
		return nil, err
	}
	type destination struct {
		DestinationId string `json:"DestinationId"`
	}
	type description struct {
		DeliveryStreamName   string        `json:"DeliveryStreamName"`
		DeliveryStreamARN    string        `json:"DeliveryStreamARN"`
		DeliveryStreamStatus string        `json:"DeliveryStreamStatus"`
		DeliveryStreamType   string        `json:"DeliveryStreamType"`
		VersionId            string        `json:"VersionId"`
		CreateTimestamp      epochSeconds  `json:"CreateTimestamp"`
		Destinations         []destination `json:"Destinations"`
		HasMoreDestinations  bool          `json:"HasMoreDestinations"`
	}
	return map[string]description{"DeliveryStreamDescription": {
		DeliveryStreamName:   ds.name,
		DeliveryStreamARN:    ds.arn,
		DeliveryStreamStatus: "ACTIVE",
		DeliveryStreamType:   ds.kind,
		VersionId:            "1",
		CreateTimestamp:      epochSeconds(ds.created),
		Destinations:         []destination{{DestinationId: "destinationId-000000000001"}},
	}}, nil
}

// firehoseRecordEntry is a record of PutRecord and PutRecordBatch.
type firehoseRecordEntry struct {
	Data []byte `json:"Data"`
}

// checkFirehoseRecord checks a record against the limit of its size; path
// is its place in the request.
func checkFirehoseRecord(r firehoseRecordEntry, path string) error {
	if r.Data == nil {
		return constraintError(ServiceFirehose, "null", path+"data", "must not be null")
	}
	if len(r.Data) > firehoseMaxRecordBytes {
		return constraintError(ServiceFirehose, fmt.Sprintf("'java.nio.HeapByteBuffer[pos=0 lim=%d cap=%d]'", len(r.Data), len(r.Data)), path+"data", "must have length less than or equal to 1024000")
	}
	return nil
}

type firehosePutRecordInput struct {
	DeliveryStreamName string              `json:"DeliveryStreamName"`
	Record             firehoseRecordEntry `json:"Record"`
}

func (in firehosePutRecordInput) name() (string, error) {
	return in.DeliveryStreamName, checkDeliveryStreamName(in.DeliveryStreamName)
}

func (s *Server) firehosePutRecord(c *call) (any, error) {
	var in firehosePutRecordInput
	if _, err := c.decodeResource(&in); err != nil {
		return nil, err
	}
	if err := checkFirehoseRecord(in.Record, "record."); err != nil {
		return nil, err
	}
	s.firehose.mu.Lock()
	defer s.firehose.mu.Unlock()
	ds, err := s.deliveryStream(c, in.DeliveryStreamName, true)
	if err != nil {
		return nil, err
	}
	if code, msg := c.fault.recordFault(c, ""); code != "" {
		if code == "InternalFailure" {
			return nil, internalFailure()
		}
		return nil, throttled(c).withMessage(msg)
	}
	c.accepted = 1
	return map[string]any{"RecordId": s.firehosePut(ds, in.Record.Data, s.now()), "Encrypted": false}, nil
}

type putRecordBatchInput struct {
	DeliveryStreamName string                `json:"DeliveryStreamName"`
	Records            []firehoseRecordEntry `json:"Records"`
}

func (in putRecordBatchInput) name() (string, error) {
	return in.DeliveryStreamName, checkDeliveryStreamName(in.DeliveryStreamName)
}

type putRecordBatchResult struct {
	RecordId     string `json:"RecordId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

func (s *Server) firehosePutRecordBatch(c *call) (any, error) {
	var in putRecordBatchInput
	if _, err := c.decodeResource(&in); err != nil {
		return nil, err
	}
	switch n := len(in.Records); {
	case n == 0:
		return nil, constraintError(ServiceFirehose, "'[]'", "records", "must have length greater than or equal to 1")
	case n > firehoseMaxRecords:
		return nil, constraintError(ServiceFirehose, fmt.Sprintf("'[%d records]'", n), "records", "must have length less than or equal to 500")
	}
	total := 0
	for i, r := range in.Records {
		if err := checkFirehoseRecord(r, fmt.Sprintf("records.%d.member.", i+1)); err != nil {
			return nil, err
		}
		total += len(r.Data)
	}
	if total > firehoseMaxRequestBytes {
		return nil, clientError("InvalidArgumentException", "Records size exceeds 4 MiB limit: %d bytes.", total)
	}
	s.firehose.mu.Lock()
	defer s.firehose.mu.Unlock()
	ds, err := s.deliveryStream(c, in.DeliveryStreamName, true)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := struct {
		FailedPutCount   int                    `json:"FailedPutCount"`
		Encrypted        bool                   `json:"Encrypted"`
		RequestResponses []putRecordBatchResult `json:"RequestResponses"`
	}{RequestResponses: make([]putRecordBatchResult, len(in.Records))}
	for i, r := range in.Records {
		if code, msg := c.fault.recordFault(c, ""); code != "" {
			out.RequestResponses[i] = putRecordBatchResult{ErrorCode: code, ErrorMessage: msg}
			out.FailedPutCount++
			continue
		}
		out.RequestResponses[i] = putRecordBatchResult{RecordId: s.firehosePut(ds, r.Data, now)}
	}
	c.accepted, c.failed = len(in.Records)-out.FailedPutCount, out.FailedPutCount
	return out, nil
}
