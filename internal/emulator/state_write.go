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
	j.field("saved_at", st.SavedAt)
	j.raw(`,"kinesis_streams":`)
	writeArray(j, st.Kinesis, func(ks kinesisStreamState) {
		j.raw(`{"name":`)
		j.value(ks.Name)
		j.field("arn", ks.ARN)
		j.field("mode", ks.Mode)
		j.field("created", ks.Created)
		if ks.RetentionHours != 0 {
			j.field("retention_hours", ks.RetentionHours)
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
		j.field("arn", ds.ARN)
		j.field("kind", ds.Kind)
		j.field("created", ds.Created)
		j.raw(`,"records":`)
		writeArray(j, ds.Records, func(r FirehoseRecord) { j.value(r) })
		j.field("dropped", ds.Dropped)
		j.field("puts", ds.Puts)
		j.raw(`}`)
	})
	j.raw(`,"log_groups":`)
	writeArray(j, st.Logs, func(g logGroupState) {
		j.raw(`{"name":`)
		j.value(g.Name)
		j.field("arn", g.ARN)
		j.field("created", g.Created)
		j.field("retention_days", g.RetentionDays)
		j.field("seq", g.Seq)
		j.raw(`,"streams":`)
		writeArray(j, g.Streams, func(ls logStreamState) {
			j.raw(`{"name":`)
			j.value(ls.Name)
			j.field("created", ls.Created)
			j.raw(`,"events":`)
			writeArray(j, ls.Events, func(e logEventState) { j.value(e) })
			j.field("first_event", ls.FirstEvent)
			j.field("last_event", ls.LastEvent)
			j.field("last_ingestion", ls.LastIngestion)
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

// field writes ,"name": and then v, the field of an object after its
// first.
func (j *jsonWriter) field(name string, v any) {
	j.raw(`,"` + name + `":`)
	j.value(v)
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
