package emulator

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseFault parses a fault written as a command-line flag:
//
//	SERVICE/RESOURCE:SETTING[,SETTING...]
//
// SERVICE is kinesis, firehose, logs or sts; RESOURCE a stream, delivery
// stream or log group name (log groups may hold slashes), a role's name
// for sts, or * for every one; a SETTING is one of
//
//	throttle_records=F  fail_records=F  throttle_requests=F  server_errors=F
//	latency=DURATION    access_denied   not_found   operations=OP[+OP...]
//	external_id=ID (sts only)
//
// with F a fraction in [0, 1]: "kinesis/orders:throttle_records=0.3",
// "logs//sluice/audit:server_errors=0.2,latency=300ms". It returns an error
// wrapping ErrInvalidFault.
func ParseFault(s string) (Fault, error) {
	var f Fault
	target, settings, ok := strings.Cut(s, ":")
	svc, resource, ok2 := strings.Cut(target, "/")
	if !ok || !ok2 || settings == "" {
		return f, fmt.Errorf("%w: %q: want SERVICE/RESOURCE:SETTING[,SETTING...]", ErrInvalidFault, s)
	}
	f.Service, f.Resource = Service(svc), resource
	for _, setting := range strings.Split(settings, ",") {
		key, value, hasValue := strings.Cut(strings.TrimSpace(setting), "=")
		var err error
		switch key {
		case "throttle_records":
			f.ThrottleRecords, err = strconv.ParseFloat(value, 64)
		case "fail_records":
			f.FailRecords, err = strconv.ParseFloat(value, 64)
		case "throttle_requests":
			f.ThrottleRequests, err = strconv.ParseFloat(value, 64)
		case "server_errors":
			f.ServerErrors, err = strconv.ParseFloat(value, 64)
		case "latency":
			f.Latency, err = time.ParseDuration(value)
		case "access_denied":
			f.AccessDenied, err = parseFlagBool(value, hasValue)
		case "not_found":
			f.NotFound, err = parseFlagBool(value, hasValue)
		case "operations":
			f.Operations = strings.Split(value, "+")
		case "external_id":
			f.ExternalID = value
		default:
			err = fmt.Errorf("unknown setting %q", key)
		}
		if err != nil {
			return Fault{}, fmt.Errorf("%w: %q: %s: %w", ErrInvalidFault, s, key, err)
		}
	}
	if err := f.Validate(); err != nil {
		return Fault{}, fmt.Errorf("%q: %w", s, err)
	}
	return f, nil
}

// parseFlagBool reads the value of a boolean setting; a bare setting is
// true.
func parseFlagBool(value string, hasValue bool) (bool, error) {
	if !hasValue {
		return true, nil
	}
	return strconv.ParseBool(value)
}

// String writes f as ParseFault reads it.
func (f Fault) String() string {
	var settings []string
	add := func(name string, v float64) {
		if v > 0 {
			settings = append(settings, name+"="+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	add("throttle_records", f.ThrottleRecords)
	add("fail_records", f.FailRecords)
	add("throttle_requests", f.ThrottleRequests)
	add("server_errors", f.ServerErrors)
	if f.Latency > 0 {
		settings = append(settings, "latency="+f.Latency.String())
	}
	if f.AccessDenied {
		settings = append(settings, "access_denied")
	}
	if f.NotFound {
		settings = append(settings, "not_found")
	}
	if len(f.Operations) > 0 {
		settings = append(settings, "operations="+strings.Join(f.Operations, "+"))
	}
	if f.ExternalID != "" {
		settings = append(settings, "external_id="+f.ExternalID)
	}
	return string(f.Service) + "/" + f.Resource + ":" + strings.Join(settings, ",")
}
