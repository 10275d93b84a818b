package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// jsonContentType is the content type of the AWS JSON 1.1 protocol.
const jsonContentType = "application/x-amz-json-1.1"

// maxRequestBytes bounds a request's body: a full PutRecords (5 MiB of data,
// base64-encoded, with 500 partition keys) is about 7 MiB.
const maxRequestBytes = 16 << 20

// targetPrefixes maps the prefix of X-Amz-Target to its service.
var targetPrefixes = map[string]Service{
	kinesisTargetPrefix:  ServiceKinesis,
	firehoseTargetPrefix: ServiceFirehose,
	logsTargetPrefix:     ServiceLogs,
}

// The prefixes of X-Amz-Target.
const (
	kinesisTargetPrefix  = "Kinesis_20131202"
	firehoseTargetPrefix = "Firehose_20150804"
	logsTargetPrefix     = "Logs_20140328"
)

// mediaType is the media type of a request's Content-Type, without
// parameters.
func mediaType(r *http.Request) string {
	contentType, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.TrimSpace(contentType)
}

// unknownOperation is the error of a call of an operation svc has but the
// emulator does not serve: 400 UnknownOperationException (InvalidAction
// for STS), naming the operation and those served.
func unknownOperation(s *Server, svc Service, name string) *apiError {
	served := s.Operations(svc)
	code := "UnknownOperationException"
	if svc == ServiceSTS {
		code = "InvalidAction"
	}
	return clientError(code, "Operation %s of %s is not served by this emulator; it serves %s.", name, serviceTitles[svc], strings.Join(served, ", "))
}

// serviceTitles names the services in messages.
var serviceTitles = map[Service]string{
	ServiceKinesis:  "Kinesis (" + kinesisTargetPrefix + ")",
	ServiceFirehose: "Firehose (" + firehoseTargetPrefix + ")",
	ServiceLogs:     "CloudWatch Logs (" + logsTargetPrefix + ")",
	ServiceSTS:      "STS (version " + stsVersion + ")",
}

// operation answers one call of one operation: it decodes c's body, names
// the resource with c.enter (both with c.decodeResource when its input
// names one resource), and returns the output to encode as JSON (nil
// for an empty body) or an error (an *apiError for an AWS error).
type operation func(c *call) (any, error)

// call is one AWS call being answered.
type call struct {
	ctx     context.Context
	server  *Server
	service Service
	op      string
	region  string
	body    []byte

	// accessKeyID is the access key of the call's credential scope.
	accessKeyID string
	// form is the input of a query-protocol call (STS), body that of a
	// JSON one.
	form url.Values

	// Set by enter: the resource the call names, and its fault if any.
	resource string
	fault    *faultRule
	// Counted by the operation: records stored and refused one by one.
	accepted, failed int
}

// decode decodes the call's body into v, or fails as AWS does with
// SerializationException.
func (c *call) decode(v any) error {
	if err := json.Unmarshal(c.body, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return serializationError("Unexpected value type at %s: %s", typeErr.Field, typeErr.Value)
		}
		return serializationError("%s", err.Error())
	}
	return nil
}

// enter names the resource of the call, then injects that resource's
// faults that apply to the whole call: latency, AccessDenied,
// ResourceNotFound, a 5xx or a throttling error.
func (c *call) enter(resource string) error {
	c.resource = resource
	c.fault = c.server.faults.match(c.service, resource, c.op)
	if c.fault == nil {
		return nil
	}
	return c.fault.beforeCall(c)
}

// resourceInput is the input of an operation on one named resource.
type resourceInput interface {
	// name checks and returns the name of the call's resource.
	name() (string, error)
}

// decodeResource decodes the call's body into in, checks the resource it
// names and enters that resource: how each operation on one named resource
// begins, failing as AWS does with a SerializationException first, then a
// validation error, then the resource's faults. It returns the resource's
// name.
func (c *call) decodeResource(in resourceInput) (string, error) {
	if err := c.decode(in); err != nil {
		return "", err
	}
	name, err := in.name()
	if err != nil {
		return "", err
	}
	return name, c.enter(name)
}

// arn returns the ARN of a resource of the call's service in the call's
// region: arn:aws:SERVICE:REGION:ACCOUNT:RESOURCE.
func (c *call) arn(resource string) string {
	return arnOf(c.service, c.region, c.server.cfg.AccountID, resource)
}

func arnOf(svc Service, region, account, resource string) string {
	return "arn:aws:" + string(svc) + ":" + region + ":" + account + ":" + resource
}

// serveAWS answers an AWS JSON 1.1 call.
func (s *Server) serveAWS(w http.ResponseWriter, r *http.Request) {
	if mediaType(r) == queryContentType {
		s.serveQuery(w, r)
		return
	}
	w.Header().Set("x-amzn-RequestId", s.requestIDs.next())
	svc, op, apiErr := s.route(r)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	scope, apiErr := checkAuthorization(r, string(svc))
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, &apiError{Code: "SerializationException", Message: fmt.Sprintf("Request body over %d bytes.", maxRequestBytes), Status: http.StatusRequestEntityTooLarge})
			return
		}
		// Never an empty 200 the client takes for success; a client that
		// went away reads nothing.
		writeError(w, unreadableBody(err))
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		writeError(w, serializationError("Start of structure or map found where not expected."))
		return
	}
	c := &call{ctx: r.Context(), server: s, service: svc, op: op.name, region: scope.Region, accessKeyID: scope.AccessKeyID, body: body}
	out, apiErr := s.run(c, op)
	switch {
	case apiErr == errClientGone:
	case apiErr != nil:
		writeError(w, apiErr)
	default:
		writeOutput(w, out)
	}
}

// errClientGone is run's answer when the client went away, or the emulator
// is stopping: nothing is to be written.
var errClientGone = &apiError{Code: "ClientGone", Status: 499}

// run answers a call with op, counts it and logs it. It returns the
// output, or the error to answer (errClientGone when there is no one to
// answer).
func (s *Server) run(c *call, op namedOperation) (any, *apiError) {
	start := time.Now()
	out, err := op.fn(c)
	s.counters.count(c, err)
	if mutates(op.name) {
		s.markChanged()
	}
	if err != nil {
		var apiErr *apiError
		if !errors.As(err, &apiErr) {
			if c.ctx.Err() != nil {
				return nil, errClientGone
			}
			s.log.Error("emulator call failed", "service", c.service, "operation", op.name, "err", err)
			apiErr = internalFailure()
		}
		s.log.Debug("emulator call", "service", c.service, "operation", op.name, "resource", c.resource, "status", apiErr.Status, "error", apiErr.Code, "took", time.Since(start))
		return nil, apiErr
	}
	s.log.Debug("emulator call", "service", c.service, "operation", op.name, "resource", c.resource, "status", http.StatusOK, "took", time.Since(start))
	return out, nil
}

// namedOperation is an operation with its name.
type namedOperation struct {
	name string
	fn   operation
}

// route finds the operation X-Amz-Target names.
func (s *Server) route(r *http.Request) (Service, namedOperation, *apiError) {
	if ct := mediaType(r); ct != jsonContentType && ct != "application/x-amz-json-1.0" {
		return "", namedOperation{}, serializationError("Content-Type %q is not %s (the JSON protocol of Kinesis, Firehose and CloudWatch Logs) nor %s (the query protocol of STS).", ct, jsonContentType, queryContentType)
	}
	target := r.Header.Get("X-Amz-Target")
	if target == "" {
		return "", namedOperation{}, clientError("UnknownOperationException", "No X-Amz-Target header: a call of the JSON protocol names its operation there (Kinesis_20131202.PutRecords).")
	}
	prefix, name, _ := strings.Cut(target, ".")
	svc, ok := targetPrefixes[prefix]
	if !ok {
		return "", namedOperation{}, clientError("UnknownOperationException", "Operation %s of service %s is not served by this emulator: it serves Kinesis (%s), Firehose (%s) and CloudWatch Logs (%s) in the JSON protocol, and STS in the query protocol.",
			name, prefix, kinesisTargetPrefix, firehoseTargetPrefix, logsTargetPrefix)
	}
	fn, ok := s.operations[svc][name]
	if !ok {
		return "", namedOperation{}, unknownOperation(s, svc, name)
	}
	return svc, namedOperation{name: name, fn: fn}, nil
}

// writeOutput writes a 200 answer with out as JSON; nil is an empty body.
func writeOutput(w http.ResponseWriter, out any) {
	w.Header().Set("Content-Type", jsonContentType)
	if out == nil {
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return
	}
	body, err := json.Marshal(out)
	if err != nil {
		writeError(w, internalFailure())
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeError writes an AWS error: {"__type": CODE, "message": MESSAGE}.
func writeError(w http.ResponseWriter, e *apiError) {
	body, _ := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message,omitempty"`
	}{e.Code, e.Message})
	w.Header().Set("Content-Type", jsonContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// requestIDs numbers the calls, for x-amzn-RequestId.
type requestIDs struct{ n atomic.Uint64 }

func (r *requestIDs) next() string {
	n := r.n.Add(1)
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", n)
}

// epochSeconds is a timestamp of the JSON 1.1 protocol: seconds since the
// epoch, as a number with a fraction.
type epochSeconds time.Time

func (t epochSeconds) MarshalJSON() ([]byte, error) {
	ms := time.Time(t).UnixMilli()
	return []byte(strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)), nil
}

func (t *epochSeconds) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("timestamp %s: %w", b, err)
	}
	sec := int64(f)
	*t = epochSeconds(time.Unix(sec, int64((f-float64(sec))*1e9)))
	return nil
}
