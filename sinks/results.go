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
	n := len(sent)
	if sent == nil {
		n = len(results)
	}
	for i := range n {
		index := i
		if sent != nil {
			index = sent[i]
		}
		if i >= len(answer) {
			results[index] = Result{Status: Retryable, Code: CodeMissingResult,
				Message: fmt.Sprintf("%s answered for %d of %d records", operation, len(answer), n)}
			continue
		}
		e := entryError(answer[i])
		if !e.Failed {
			results[index] = Result{Status: Accepted}
			continue
		}
		results[index] = Result{Status: Retryable, Code: e.Code, Message: e.Message}
	}
}
