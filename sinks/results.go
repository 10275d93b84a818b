package sinks

import "fmt"

// CodeMissingResult is the Code of the Retryable result of a record sent in
// a call whose per-record answer left it out.
const CodeMissingResult = "MissingResult"

// EntryError is what a service's per-record answer says of one record: an
// error code and message when Failed.
type EntryError struct {
	Failed        bool
	Code, Message string
}

// SentResults fills in the results of the records a call sent from the
// service's per-record answer, entry i of which is that of
// records[sent[i]], as entryError reads it: a failed record is Retryable
// with the entry's code and message (whatever the code: the services of
// the AWS sinks report no failure of one record that a later call cannot
// fix), any other is Accepted. A record the answer leaves out is Retryable,
// CodeMissingResult; operation names the call in its message. A nil sent
// is every record, in order.
func SentResults[E any](results []Result, sent []int, answer []E, operation string, entryError func(E) EntryError) {
	a := NewAnswer(results, sent, operation)
	for _, e := range answer[:min(len(answer), a.records())] {
		a.Entry(entryError(e))
	}
	a.entries = len(answer)
	a.End()
}

// Answer fills in the results of the records a call sent as SentResults
// does, from a per-record answer read entry by entry.
type Answer struct {
	results   []Result
	sent      []int
	operation string
	entries   int // read so far
}

// NewAnswer returns the Answer of the records of results that a call
// sent (nil: all), in order; operation names the call.
func NewAnswer(results []Result, sent []int, operation string) Answer {
	return Answer{results: results, sent: sent, operation: operation}
}

// records returns how many records the call sent.
func (a *Answer) records() int {
	if a.sent == nil {
		return len(a.results)
	}
	return len(a.sent)
}

// index returns the index in results of the record of entry i.
func (a *Answer) index(i int) int {
	if a.sent == nil {
		return i
	}
	return a.sent[i]
}

// Entry sets the result of the record of the answer's next entry: an
// entry that failed is Retryable with its code and message, any other
// Accepted. An entry beyond the records sent is ignored.
func (a *Answer) Entry(e EntryError) {
	if i := a.entries; i < a.records() {
		a.results[a.index(i)] = Result{Status: Accepted}
		if e.Failed {
			a.results[a.index(i)] = Result{Status: Retryable, Code: e.Code, Message: e.Message}
		}
	}
	a.entries++
}

// End sets the results of the records the answer left out: Retryable,
// CodeMissingResult.
func (a *Answer) End() {
	n := a.records()
	for i := a.entries; i < n; i++ {
		a.results[a.index(i)] = Result{Status: Retryable, Code: CodeMissingResult,
			Message: fmt.Sprintf("%s answered for %d of %d records", a.operation, a.entries, n)}
	}
}
