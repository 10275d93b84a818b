package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// AdminPrefix starts the path of every admin endpoint. The admin API has
// no authentication: it is for loopback.
const AdminPrefix = "/_emulator/"

// maxAdminBody bounds the body of an admin call.
const maxAdminBody = 1 << 20

// registerAdmin mounts the admin API on mux:
//
//	GET    /_emulator/healthz                       200 "ok"
//	GET    /_emulator/faults                        {"faults": [Fault...]}
//	POST   /_emulator/faults                        a Fault or [Fault...]: set them
//	DELETE /_emulator/faults[?service=S&resource=R] clear one, or all
//	GET    /_emulator/counters[?service=S&resource=R] {"kinesis/x": Counters...}, or one Counters
//	DELETE /_emulator/counters                      zero them
//	GET    /_emulator/firehose/{name}/records[?format=raw]
//	GET    /_emulator/kinesis/{stream}/records
//	GET    /_emulator/logs/events?group=G&stream=S
//	GET    /_emulator/sts/assumed-roles             {"assumed_roles": [AssumedRole...]}
func (s *Server) registerAdmin(mux *http.ServeMux) {
	mux.HandleFunc("GET /_emulator/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /_emulator/faults", func(w http.ResponseWriter, _ *http.Request) {
		writeAdminJSON(w, http.StatusOK, map[string][]Fault{"faults": s.Faults()})
	})
	mux.HandleFunc("POST /_emulator/faults", s.adminSetFaults)
	mux.HandleFunc("DELETE /_emulator/faults", func(w http.ResponseWriter, r *http.Request) {
		svc, resource := Service(r.URL.Query().Get("service")), r.URL.Query().Get("resource")
		switch {
		case svc == "" && resource == "":
			s.ClearFaults()
		case svc == "" || resource == "":
			writeAdminError(w, http.StatusBadRequest, errors.New("give both service and resource, or neither to clear every fault"))
			return
		case !s.ClearFault(svc, resource):
			writeAdminError(w, http.StatusNotFound, fmt.Errorf("no fault on %s/%s", svc, resource))
			return
		}
		writeAdminJSON(w, http.StatusOK, map[string][]Fault{"faults": s.Faults()})
	})
	mux.HandleFunc("GET /_emulator/counters", func(w http.ResponseWriter, r *http.Request) {
		svc, resource := Service(r.URL.Query().Get("service")), r.URL.Query().Get("resource")
		if svc != "" || resource != "" {
			writeAdminJSON(w, http.StatusOK, s.Counters(svc, resource))
			return
		}
		writeAdminJSON(w, http.StatusOK, s.AllCounters())
	})
	mux.HandleFunc("DELETE /_emulator/counters", func(w http.ResponseWriter, _ *http.Request) {
		s.ResetCounters()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_emulator/firehose/{name}/records", s.adminFirehoseRecords)
	mux.HandleFunc("GET /_emulator/sts/assumed-roles", func(w http.ResponseWriter, _ *http.Request) {
		writeAdminJSON(w, http.StatusOK, map[string][]AssumedRole{"assumed_roles": s.AssumedRoles()})
	})
	mux.HandleFunc("GET /_emulator/kinesis/{stream}/records", func(w http.ResponseWriter, r *http.Request) {
		records, err := s.KinesisRecords(r.PathValue("stream"))
		if err != nil {
			writeAdminError(w, http.StatusNotFound, err)
			return
		}
		writeAdminJSON(w, http.StatusOK, map[string][]KinesisRecord{"records": records})
	})
	mux.HandleFunc("GET /_emulator/logs/events", func(w http.ResponseWriter, r *http.Request) {
		events, err := s.LogEvents(r.URL.Query().Get("group"), r.URL.Query().Get("stream"))
		if err != nil {
			writeAdminError(w, http.StatusNotFound, err)
			return
		}
		writeAdminJSON(w, http.StatusOK, map[string][]LogEvent{"events": events})
	})
}

// adminSetFaults sets the faults of a body holding one Fault or an array.
func (s *Server) adminSetFaults(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAdminBody))
	if err != nil {
		writeAdminError(w, http.StatusRequestEntityTooLarge, err)
		return
	}
	var faults []Fault
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		err = json.Unmarshal(trimmed, &faults)
	} else {
		var f Fault
		err = json.Unmarshal(trimmed, &f)
		faults = []Fault{f}
	}
	if err != nil {
		writeAdminError(w, http.StatusBadRequest, fmt.Errorf("decoding faults: %w", err))
		return
	}
	for _, f := range faults {
		if err := f.Validate(); err != nil {
			writeAdminError(w, http.StatusBadRequest, err)
			return
		}
	}
	for _, f := range faults {
		if err := s.SetFault(f); err != nil {
			writeAdminError(w, http.StatusBadRequest, err)
			return
		}
	}
	writeAdminJSON(w, http.StatusOK, map[string][]Fault{"faults": s.Faults()})
}

// adminFirehoseRecords answers the records of a delivery stream: as JSON
// (data base64-encoded), or with format=raw their data concatenated, as
// Firehose would write them to an S3 object.
func (s *Server) adminFirehoseRecords(w http.ResponseWriter, r *http.Request) {
	records, dropped, err := s.FirehoseRecords(r.PathValue("name"))
	if err != nil {
		writeAdminError(w, http.StatusNotFound, err)
		return
	}
	if r.URL.Query().Get("format") == "raw" {
		w.Header().Set("Content-Type", "application/octet-stream")
		for _, rec := range records {
			if _, err := w.Write(rec.Data); err != nil {
				return
			}
		}
		return
	}
	writeAdminJSON(w, http.StatusOK, struct {
		Records []FirehoseRecord `json:"records"`
		Dropped int64            `json:"dropped"`
	}{records, dropped})
}

func writeAdminJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeAdminError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func writeAdminError(w http.ResponseWriter, status int, err error) {
	body, _ := json.Marshal(map[string]string{"error": err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
