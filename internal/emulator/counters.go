package emulator

import "sync"

// OperationCounters count the calls of one operation on one resource.
type OperationCounters struct {
	// Calls is every call that named the resource, answered or not.
	Calls int64 `json:"calls"`
	// Errors is the calls answered with an error (a fault's, or AWS's).
	Errors int64 `json:"errors"`
	// RecordsAccepted is the records (log events) stored by the calls.
	RecordsAccepted int64 `json:"records_accepted"`
	// RecordsFailed is the records refused one by one: per-record errors
	// of PutRecords and PutRecordBatch, rejectedLogEventsInfo of
	// PutLogEvents.
	RecordsFailed int64 `json:"records_failed"`
}

func (o *OperationCounters) add(other OperationCounters) {
	o.Calls += other.Calls
	o.Errors += other.Errors
	o.RecordsAccepted += other.RecordsAccepted
	o.RecordsFailed += other.RecordsFailed
}

// Counters count the calls that named one resource (a stream, delivery
// stream or log group): in all, and by operation.
type Counters struct {
	OperationCounters
	ByOperation map[string]OperationCounters `json:"by_operation"`
}

// counterSet holds the counters of every resource.
type counterSet struct {
	mu        sync.Mutex
	resources map[faultKey]map[string]*OperationCounters
}

func newCounterSet() *counterSet {
	return &counterSet{resources: map[faultKey]map[string]*OperationCounters{}}
}

// count counts a call that ended with err. A call that failed before it
// named its resource (a body that is no JSON, a missing name) is not
// counted.
func (cs *counterSet) count(c *call, err error) {
	if c.resource == "" {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	key := faultKey{c.service, c.resource}
	ops := cs.resources[key]
	if ops == nil {
		ops = map[string]*OperationCounters{}
		cs.resources[key] = ops
	}
	o := ops[c.op]
	if o == nil {
		o = &OperationCounters{}
		ops[c.op] = o
	}
	o.Calls++
	if err != nil {
		o.Errors++
		return
	}
	o.RecordsAccepted += int64(c.accepted)
	o.RecordsFailed += int64(c.failed)
}

// get returns the counters of one resource; zero when it had no call.
func (cs *counterSet) get(svc Service, resource string) Counters {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.snapshot(cs.resources[faultKey{svc, resource}])
}

// all returns the counters of every resource that had a call, keyed
// SERVICE/RESOURCE.
func (cs *counterSet) all() map[string]Counters {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := make(map[string]Counters, len(cs.resources))
	for key, ops := range cs.resources {
		out[string(key.service)+"/"+key.resource] = cs.snapshot(ops)
	}
	return out
}

func (cs *counterSet) snapshot(ops map[string]*OperationCounters) Counters {
	out := Counters{ByOperation: make(map[string]OperationCounters, len(ops))}
	for name, o := range ops {
		out.ByOperation[name] = *o
		out.add(*o)
	}
	return out
}

// reset zeroes every counter.
func (cs *counterSet) reset() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	clear(cs.resources)
}
