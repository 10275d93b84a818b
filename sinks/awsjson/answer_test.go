package awsjson

import (
	"fmt"
	"strings"
	"testing"
)

// testShape is an answer of PutRecords' shape.
var testShape = AnswerShape{
	List:         "Records",
	Members:      []Member{{Name: "EncryptionType", Kind: String}, {Name: "FailedRecordCount", Kind: Int32}, {Name: "Encrypted", Kind: Bool}},
	EntryMembers: []Member{{Name: "SequenceNumber", Kind: String}},
}

// TestAnswerShapeRead checks which answers Read reads, and which it
// leaves to the SDK's deserializer, and the entries it reads.
func TestAnswerShapeRead(t *testing.T) {
	for _, tc := range []struct {
		body    string
		read    bool
		entries string // each entry's HasCode, Code and Message
	}{
		{`{"FailedRecordCount":0,"Records":[{"SequenceNumber":"1"},{"SequenceNumber":"2"}]}`, true, "[{false  } {false  }]"},
		{` { "Records" : [ { "ErrorCode" : "E" , "ErrorMessage" : "m é" } ] , "EncryptionType" : "KMS" } ` + "\n", true, "[{true E m é}]"},
		{`{"Records":[{"ErrorCode":""}],"Encrypted":true}`, true, "[{true  }]"},
		{`{"Records":[],"Unknown":{"a":[1,-2.5e+3,true,false,null,"\"\u00e9"]}}`, true, "[]"},
		{`{"Records":[{"SequenceNumber":"\u0031\n","Other":null}]}`, true, "[{false  }]"},
		{`{}`, true, "[]"},
		{`{"FailedRecordCount":-2147483648,"Records":[]}`, true, "[]"},
		{`{"FailedRecordCount": -0 ,"Records":[],"Encrypted": false}`, true, "[]"},
		{`{"Records":[{"SequenceNumber":"\ud800"}],"Unknown":"\udc00\ud800"}`, true, "[{false  }]"},
		{`{"Records":[],"Deep":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`, true, "[]"},

		{``, false, ""},
		{`null`, false, ""},
		{`[]`, false, ""},
		{`{"Records":null}`, false, ""},
		{`{"Records":[null]}`, false, ""},
		{`{"Records":[{"ErrorCode":null}]}`, false, ""},
		{`{"Records":[{"ErrorCode":"\u0041"}]}`, false, ""},
		{`{"Records":[{"ErrorMessage":"a\"b"}]}`, false, ""},
		{`{"Records":[{"Error\u0043ode":"A"}]}`, false, ""},
		{`{"Records":[{"ErrorCode":"A","ErrorCode":"B"}]}`, false, ""},
		{`{"Records":[],"Records":[]}`, false, ""},
		{`{"FailedRecordCount":1,"FailedRecordCount":1,"Records":[]}`, false, ""},
		{`{"FailedRecordCount":2147483648,"Records":[]}`, false, ""},
		{`{"FailedRecordCount":1.0,"Records":[]}`, false, ""},
		{`{"FailedRecordCount":1e2,"Records":[]}`, false, ""},
		{`{"FailedRecordCount":01,"Records":[]}`, false, ""},
		{`{"FailedRecordCount":"1","Records":[]}`, false, ""},
		{`{"Encrypted":1,"Records":[]}`, false, ""},
		{`{"Records":[{"SequenceNumber":1}]}`, false, ""},
		{`{"Records":[{"SequenceNumber":"\x"}]}`, false, ""},
		{`{"Records":[{"SequenceNumber":"\u00g0"}]}`, false, ""},
		{"{\"Records\":[{\"SequenceNumber\":\"a\x01\"}]}", false, ""},
		{`{"Records":[]} x`, false, ""},
		{`{"Records":[]}{}`, false, ""},
		{`{"Records":[],}`, false, ""},
		{`{"Records":[{},]}`, false, ""},
		{`{"Records":[{}]`, false, ""},
		{`{"Unknown":[1 2],"Records":[]}`, false, ""},
		{`{"Unknown":tru,"Records":[]}`, false, ""},
		{`{"Unknown":-,"Records":[]}`, false, ""},
		{`{"Encrypted":null,"Records":[]}`, false, ""},
		{`{"Rec\u006frds":[]}`, false, ""},
		{`{"FailedRecordCount":1,"Failed\u0052ecordCount":1,"Records":[]}`, false, ""},

		// schemas.Cursor refuses what the SDK reads: invalid UTF-8,
		// nesting deeper than 64 levels.
		{"{\"Records\":[{\"ErrorCode\":\"E\xff\"}]}", false, ""},
		{"{\"Records\":[],\"Unknown\":[\"\xed\xa0\x80\"]}", false, ""},
		{`{"Records":[],"Deep":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, false, ""},
	} {
		var entries []string
		read := testShape.Read([]byte(tc.body), func(e Entry) {
			entries = append(entries, fmt.Sprintf("{%v %s %s}", e.HasCode, e.Code, e.Message))
		})
		if read != tc.read {
			t.Errorf("Read(%q) = %v, want %v", tc.body, read, tc.read)
			continue
		}
		if got := fmt.Sprintf("%v", entries); read && got != tc.entries {
			t.Errorf("Read(%q) read the entries %s, want %s", tc.body, got, tc.entries)
		}
	}
}

// BenchmarkAnswerShapeRead measures Read of an answer of 500 entries, one
// of PutRecords' shape that Kinesis gives a batch it stored whole, and one
// whose every entry failed.
func BenchmarkAnswerShapeRead(b *testing.B) {
	for _, bc := range []struct{ name, entry string }{
		{"stored", `{"SequenceNumber":"49590338271490256608559692538361571095921575989136588898","ShardId":"shardId-000000000000"}`},
		{"failed", `{"ErrorCode":"ProvisionedThroughputExceededException","ErrorMessage":"Rate exceeded for shard shardId-000000000000 in stream events under account 123456789012."}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := []byte(`{"FailedRecordCount":0,"Records":[` + strings.Repeat(bc.entry+",", 499) + bc.entry + `]}`)
			n := 0
			count := func(Entry) { n++ }
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				n = 0
				if !testShape.Read(body, count) || n != 500 {
					b.Fatalf("Read read %d entries, or none", n)
				}
			}
		})
	}
}
