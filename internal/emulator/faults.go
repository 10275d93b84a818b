package emulator

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/retry"
)

// AnyResource as a Fault's Resource makes the fault apply to every resource
// of its service that has no fault of its own.
const AnyResource = "*"

// Fault is what to inject into the calls naming one resource: a Kinesis
// stream, a Firehose delivery stream or a CloudWatch log group. Fractions
// are in [0, 1]; each call or record draws its own chance.
//
// The order is: Latency, then AccessDenied, NotFound, ServerErrors,
// ThrottleRequests (each failing the whole call), then, for the records of
// a call that passed, ThrottleRecords and FailRecords.
type Fault struct {
	// Service and Resource say which resource: a stream, delivery stream
	// or log group name, a role's name for ServiceSTS (sluice for
	// arn:aws:iam::123456789012:role/sluice), or AnyResource.
	Service  Service `json:"service"`
	Resource string  `json:"resource"`
	// Operations, when not empty, limits the fault to these operations
	// (PutRecords, PutLogEvents, ...); empty is every operation that
	// names the resource.
	Operations []string `json:"operations,omitempty"`

	// Latency is added before the call is answered.
	Latency time.Duration `json:"-"`
	// AccessDenied answers AccessDeniedException (400) until cleared.
	AccessDenied bool `json:"access_denied,omitempty"`
	// NotFound answers ResourceNotFoundException (400) until cleared.
	NotFound bool `json:"not_found,omitempty"`
	// ServerErrors is the fraction of calls answered with a 5xx:
	// InternalFailure (500) for Kinesis and Firehose,
	// ServiceUnavailableException (500) for CloudWatch Logs.
	ServerErrors float64 `json:"server_errors,omitempty"`
	// ThrottleRequests is the fraction of calls refused whole as
	// throttled: ProvisionedThroughputExceededException (400) for
	// Kinesis' data calls (puts, GetRecords, GetShardIterator) and
	// LimitExceededException (400) for its others;
	// ServiceUnavailableException (503) for Firehose, whose API has no
	// throttling error of its own; ThrottlingException (400) for
	// CloudWatch Logs.
	ThrottleRequests float64 `json:"throttle_requests,omitempty"`
	// ThrottleRecords is the fraction of the records of PutRecords and
	// PutRecordBatch failed one by one with
	// ProvisionedThroughputExceededException (Kinesis) or
	// ServiceUnavailableException (Firehose); a PutRecord so chosen fails
	// whole with that error. CloudWatch Logs has no per-record errors.
	ThrottleRecords float64 `json:"throttle_records,omitempty"`
	// FailRecords is the fraction of records failed one by one with
	// InternalFailure, as ThrottleRecords.
	FailRecords float64 `json:"fail_records,omitempty"`
	// ExternalID, for STS only, refuses an AssumeRole of the role whose
	// ExternalId is another (or none) with 403 AccessDenied, as AWS does
	// when the role's trust policy requires that sts:ExternalId.
	ExternalID string `json:"external_id,omitempty"`
}

// faultJSON is a Fault as the admin API writes it: latency as a duration
// string ("300ms").
type faultJSON struct {
	jsonFault
	Latency string `json:"latency,omitempty"`
}

type jsonFault Fault

// MarshalJSON writes Latency as a duration string.
func (f Fault) MarshalJSON() ([]byte, error) {
	out := faultJSON{jsonFault: jsonFault(f)}
	if f.Latency > 0 {
		out.Latency = f.Latency.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads Latency as a duration string.
func (f *Fault) UnmarshalJSON(b []byte) error {
	var in faultJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*f = Fault(in.jsonFault)
	if in.Latency != "" {
		d, err := time.ParseDuration(in.Latency)
		if err != nil {
			return fmt.Errorf("latency: %w", err)
		}
		f.Latency = d
	}
	return nil
}

// Validate reports what is wrong with f, wrapping ErrInvalidFault.
func (f Fault) Validate() error {
	switch f.Service {
	case ServiceKinesis, ServiceFirehose, ServiceLogs, ServiceSTS:
	default:
		return fmt.Errorf("%w: service %q: use kinesis, firehose, logs or sts", ErrInvalidFault, f.Service)
	}
	if f.Resource == "" {
		return fmt.Errorf("%w: no resource: name a stream, delivery stream, log group or role (by its name), or %s for every one", ErrInvalidFault, AnyResource)
	}
	if f.Service == ServiceSTS && (f.NotFound || f.ThrottleRecords > 0 || f.FailRecords > 0) {
		return fmt.Errorf("%w: STS takes latency, access_denied, server_errors, throttle_requests and external_id", ErrInvalidFault)
	}
	if f.ExternalID != "" && f.Service != ServiceSTS {
		return fmt.Errorf("%w: external_id is a fault of STS roles only", ErrInvalidFault)
	}
	for name, v := range map[string]float64{"server_errors": f.ServerErrors, "throttle_requests": f.ThrottleRequests, "throttle_records": f.ThrottleRecords, "fail_records": f.FailRecords} {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("%w: %s %v is not a fraction in [0, 1]", ErrInvalidFault, name, v)
		}
	}
	if f.Service == ServiceLogs && (f.ThrottleRecords > 0 || f.FailRecords > 0) {
		return fmt.Errorf("%w: CloudWatch Logs has no per-record errors: use throttle_requests or server_errors", ErrInvalidFault)
	}
	if f.Latency < 0 {
		return fmt.Errorf("%w: negative latency %v", ErrInvalidFault, f.Latency)
	}
	return nil
}

// faultKey is the resource a fault applies to.
type faultKey struct {
	service  Service
	resource string
}

// faultRule is a fault being injected, with the random source of its draws.
type faultRule struct {
	Fault
	mu   sync.Mutex
	rand *rand.Rand
}

// faultSet holds the faults being injected.
type faultSet struct {
	seed  uint64
	mu    sync.Mutex
	rules map[faultKey]*faultRule
}

func newFaultSet(seed uint64) *faultSet {
	return &faultSet{seed: seed, rules: map[faultKey]*faultRule{}}
}

// set injects f, replacing the fault of its resource. Its draws start from
// the seed and the resource's name, so they are the same in every run.
func (fs *faultSet) set(f Fault) error {
	if err := f.Validate(); err != nil {
		return err
	}
	f.Operations = slices.Clone(f.Operations)
	h := fnv.New64a()
	h.Write([]byte(string(f.Service) + "/" + f.Resource))
	rule := &faultRule{Fault: f, rand: rand.New(rand.NewPCG(fs.seed, h.Sum64()))}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.rules[faultKey{f.Service, f.Resource}] = rule
	return nil
}

// clear stops injecting the fault of a resource, and reports whether there
// was one.
func (fs *faultSet) clear(svc Service, resource string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	key := faultKey{svc, resource}
	_, ok := fs.rules[key]
	delete(fs.rules, key)
	return ok
}

// clearAll stops injecting every fault.
func (fs *faultSet) clearAll() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	clear(fs.rules)
}

// list returns the faults being injected, ordered by service and resource.
func (fs *faultSet) list() []Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]Fault, 0, len(fs.rules))
	for _, r := range fs.rules {
		out = append(out, r.Fault)
	}
	slices.SortFunc(out, func(a, b Fault) int {
		if a.Service != b.Service {
			return compareStrings(string(a.Service), string(b.Service))
		}
		return compareStrings(a.Resource, b.Resource)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// match returns the fault of a call of op naming resource, or nil: the
// resource's own fault, else its service's AnyResource fault.
func (fs *faultSet) match(svc Service, resource, op string) *faultRule {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.rules) == 0 {
		return nil
	}
	rule, ok := fs.rules[faultKey{svc, resource}]
	if !ok {
		rule, ok = fs.rules[faultKey{svc, AnyResource}]
	}
	if !ok || (len(rule.Operations) > 0 && !slices.Contains(rule.Operations, op)) {
		return nil
	}
	return rule
}

// draw reports whether a chance of p came up.
func (r *faultRule) draw(p float64) bool {
	if p <= 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rand.Float64() < p
}

// beforeCall injects the faults that apply to a whole call.
func (r *faultRule) beforeCall(c *call) error {
	if err := retry.Sleep(c.ctx, r.Latency); err != nil {
		return err
	}
	switch {
	case r.AccessDenied && c.service == ServiceSTS:
		return stsAccessDenied(c, c.form.Get("RoleArn"), "the emulator was told to deny it")
	case r.AccessDenied:
		return clientError("AccessDeniedException", "User: arn:aws:iam::%s:user/emulator is not authorized to perform: %s:%s on resource: %s because the emulator was told to deny it",
			c.server.cfg.AccountID, c.service, c.op, c.resource)
	case r.NotFound:
		return notFound(c)
	case r.draw(r.ServerErrors):
		if c.service == ServiceLogs {
			return serverError("ServiceUnavailableException", http.StatusInternalServerError, "The service cannot complete the request.")
		}
		return internalFailure()
	case r.draw(r.ThrottleRequests):
		return throttled(c)
	}
	return nil
}

// recordFault returns the error code and message of a record that a
// per-record fault fails, or "" when it passes.
func (r *faultRule) recordFault(c *call, shardID string) (code, message string) {
	if r == nil {
		return "", ""
	}
	if r.draw(r.ThrottleRecords) {
		if c.service == ServiceKinesis {
			return "ProvisionedThroughputExceededException", fmt.Sprintf("Rate exceeded for shard %s in stream %s under account %s.", shardID, c.resource, c.server.cfg.AccountID)
		}
		return "ServiceUnavailableException", "Slow down."
	}
	if r.draw(r.FailRecords) {
		return "InternalFailure", "Internal service failure."
	}
	return "", ""
}

// notFound is the ResourceNotFoundException of the call's resource.
func notFound(c *call) *apiError {
	account := c.server.cfg.AccountID
	switch c.service {
	case ServiceKinesis:
		return clientError("ResourceNotFoundException", "Stream %s under account %s not found.", c.resource, account)
	case ServiceFirehose:
		return clientError("ResourceNotFoundException", "Firehose %s under account %s not found.", c.resource, account)
	}
	return clientError("ResourceNotFoundException", "The specified log group does not exist.")
}

// kinesisDataOperations are the Kinesis calls limited by a shard's
// throughput, throttled with ProvisionedThroughputExceededException; the
// others are limited by the account's call rate, LimitExceededException.
var kinesisDataOperations = map[string]bool{"PutRecord": true, "PutRecords": true, "GetRecords": true, "GetShardIterator": true}

// throttled is the error of a call throttled whole.
func throttled(c *call) *apiError {
	account := c.server.cfg.AccountID
	switch {
	case c.service == ServiceKinesis && kinesisDataOperations[c.op]:
		return clientError("ProvisionedThroughputExceededException", "Rate exceeded for stream %s under account %s.", c.resource, account)
	case c.service == ServiceKinesis:
		return clientError("LimitExceededException", "Rate exceeded for stream %s under account %s.", c.resource, account)
	case c.service == ServiceFirehose:
		return serverError("ServiceUnavailableException", http.StatusServiceUnavailable, "Slow down.")
	case c.service == ServiceSTS:
		return clientError("Throttling", "Rate exceeded")
	}
	return clientError("ThrottlingException", "Rate exceeded")
}
