package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/emulator"
)

// createForms are the forms of a --create value, for its help and errors.
const createForms = "kinesis/NAME[:shards=N], firehose/NAME or logs/GROUP[:stream=NAME[,stream=NAME...]]"

// emulatorResource is a stream, delivery stream or log group (with log
// streams) that `sluice emulator --create` makes at start.
type emulatorResource struct {
	value   string // as given, for messages
	service emulator.Service
	name    string
	shards  int      // of a Kinesis stream
	streams []string // of a log group
}

// parseCreates parses the --create values; in SLUICE_CREATE, values are
// separated by ';' as the faults of SLUICE_FAULT are.
func parseCreates(values []string) ([]emulatorResource, error) {
	var out []emulatorResource
	for _, value := range values {
		for _, spec := range strings.Split(value, ";") {
			if spec = strings.TrimSpace(spec); spec == "" {
				continue
			}
			r, err := parseCreate(spec)
			if err != nil {
				return nil, fmt.Errorf("--create %q: %w", spec, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// parseCreate parses one --create value, SERVICE/NAME[:SETTING,...] as a
// --fault names its resource.
func parseCreate(spec string) (emulatorResource, error) {
	target, settings, hasSettings := strings.Cut(spec, ":")
	svc, name, ok := strings.Cut(target, "/")
	r := emulatorResource{value: spec, service: emulator.Service(svc), name: name, shards: 1}
	if !ok || name == "" || (hasSettings && settings == "") {
		return r, fmt.Errorf("want %s", createForms)
	}
	switch r.service {
	case emulator.ServiceKinesis, emulator.ServiceFirehose, emulator.ServiceLogs:
	default:
		return r, fmt.Errorf("service %q: want %s", svc, createForms)
	}
	if !hasSettings {
		return r, nil
	}
	for _, setting := range strings.Split(settings, ",") {
		key, value, _ := strings.Cut(strings.TrimSpace(setting), "=")
		switch {
		case r.service == emulator.ServiceKinesis && key == "shards":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return r, fmt.Errorf("shards=%q: want a number of shards, 1 or more", value)
			}
			r.shards = n
		case r.service == emulator.ServiceLogs && key == "stream" && value != "":
			r.streams = append(r.streams, value)
		default:
			return r, fmt.Errorf("setting %q: want %s", setting, createForms)
		}
	}
	return r, nil
}

// create makes r in srv. One that exists already, as a --data-dir keeps
// them across restarts, is kept as it is.
func (r emulatorResource) create(srv *emulator.Server, log *slog.Logger) error {
	made := func(what, name string, err error) error {
		switch {
		case errors.Is(err, emulator.ErrExists):
			log.Info("--create: exists already, kept as it is", what, name)
		case err != nil:
			return fmt.Errorf("--create %q: %w", r.value, err)
		default:
			log.Info("--create: created", what, name)
		}
		return nil
	}
	switch r.service {
	case emulator.ServiceKinesis:
		return made("stream", r.name, srv.CreateStream(r.name, r.shards))
	case emulator.ServiceFirehose:
		return made("delivery_stream", r.name, srv.CreateDeliveryStream(r.name))
	}
	if err := made("log_group", r.name, srv.CreateLogGroup(r.name, 0)); err != nil {
		return err
	}
	for _, stream := range r.streams {
		if err := made("log_stream", r.name+":"+stream, srv.CreateLogStream(r.name, stream)); err != nil {
			return err
		}
	}
	return nil
}
