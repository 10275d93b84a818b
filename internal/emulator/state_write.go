package emulator

import (
	"bufio"
	"encoding/json"
)

// writeState writes st to w as the JSON json.Marshal makes of it, one
// record at a time, so that a save holds no copy of the whole file in
// memory: encoding/json would build the whole document in a buffer
// first, as large as the file and more, at every save.
func writeState(w *bufio.Writer, st *state) error {
	j := &jsonWriter{w: w}
	j.raw(`{"version":`)
	j.value(st.Version)
	j.raw(`,"saved_at":`)
	j.value(st.SavedAt)
	j.raw(`,"kinesis_streams":`)
	writeArray(j, st.Kinesis, func(ks kinesisStreamState) {
		j.raw(`{"name":`)
		j.value(ks.Name)
		j.raw(`,"arn":`)
		j.value(ks.ARN)
		j.raw(`,"mode":`)
		j.value(ks.Mode)
		j.raw(`,"created":`)
		j.value(ks.Created)
		if ks.RetentionHours != 0 {
			j.raw(`,"retention_hours":`)
			j.value(ks.RetentionHours)
		}
		j.raw(`,"shards":`)
		writeArray(j, ks.Shards, func(sh kinesisShardState) {
			j.raw(`{"next":`)
			j.value(sh.Next)
			j.raw(`,"records":`)
			writeArray(j, sh.Records, func(r kinesisRecordState) { j.value(r) })
			j.raw(`}`)
		})
		j.raw(`}`)
	})
	j.raw(`,"firehose_delivery_streams":`)
	writeArray(j, st.Firehose, func(ds deliveryStreamState) {
		j.raw(`{"name":`)
		j.value(ds.Name)
		j.raw(`,"arn":`)
		j.value(ds.ARN)
		j.raw(`,"kind":`)
		j.value(ds.Kind)
		j.raw(`,"created":`)
		j.value(ds.Created)
		j.raw(`,"records":`)
		writeArray(j, ds.Records, func(r FirehoseRecord) { j.value(r) })
		j.raw(`,"dropped":`)
		j.value(ds.Dropped)
		j.raw(`,"puts":`)
		j.value(ds.Puts)
		j.raw(`}`)
	})
	j.raw(`,"log_groups":`)
	writeArray(j, st.Logs, func(g logGroupState) {
		j.raw(`{"name":`)
		j.value(g.Name)
		j.raw(`,"arn":`)
		j.value(g.ARN)
		j.raw(`,"created":`)
		j.value(g.Created)
		j.raw(`,"retention_days":`)
		j.value(g.RetentionDays)
		j.raw(`,"seq":`)
		j.value(g.Seq)
		j.raw(`,"streams":`)
		writeArray(j, g.Streams, func(ls logStreamState) {
			j.raw(`{"name":`)
			j.value(ls.Name)
			j.raw(`,"created":`)
			j.value(ls.Created)
			j.raw(`,"events":`)
			writeArray(j, ls.Events, func(e logEventState) { j.value(e) })
			j.raw(`,"first_event":`)
			j.value(ls.FirstEvent)
			j.raw(`,"last_event":`)
			j.value(ls.LastEvent)
			j.raw(`,"last_ingestion":`)
			j.value(ls.LastIngestion)
			j.raw(`}`)
		})
		j.raw(`}`)
	})
	j.raw("}\n")
	return j.err
}

// jsonWriter writes JSON to a buffered writer, keeping the first error.
type jsonWriter struct {
	w   *bufio.Writer
	err error
}

// raw writes s as it is.
func (j *jsonWriter) raw(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

// value writes v as json.Marshal encodes it.
func (j *jsonWriter) value(v any) {
	if j.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		j.err = err
		return
	}
	_, j.err = j.w.Write(b)
}

// writeArray writes items as a JSON array, each by write; nil as null, as
// json.Marshal writes a nil slice.
func writeArray[T any](j *jsonWriter, items []T, write func(T)) {
	if items == nil {
		j.raw("null")
		return
	}
	j.raw("[")
	for i, item := range items {
		if i > 0 {
			j.raw(",")
		}
		write(item)
	}
	j.raw("]")
}
