package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/sluicehq/sluice/trafficpolicy"
)

// PolicyAnswer gives the answers of the front door's traffic policy (a
// deny's, a rate-limit's 429) the API's error shape, for
// trafficpolicy.WithAnswers: a client of the API reads them as it reads
// any other error. Its status is the answer's, and details name the rule
// (and the rate-limit action) besides the operation id.
func PolicyAnswer(r *http.Request, a trafficpolicy.Answer) (contentType string, body []byte) {
	code, msg := CodePolicyDenied, "The traffic policy of this server refuses the request (rule "+strconv.Quote(a.Rule)+")."
	details := map[string]string{"operation_id": operationID(r.Context()), "rule": a.Rule}
	if a.Action == trafficpolicy.ActionRateLimit {
		code = CodePolicyRateLimited
		msg = "The traffic policy of this server limits the rate of these requests (rule " + strconv.Quote(a.Rule) + "): send it again after " + strconv.FormatInt(a.RetryAfter, 10) + " seconds."
		details["retry_after"] = strconv.FormatInt(a.RetryAfter, 10)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(errorBody{ErrorCode: code.String(), StatusCode: a.Status, Msg: msg, Details: details}); err != nil {
		// Strings always encode; should that change, the code still shows.
		return "application/json", []byte(`{"error_code":"` + code.String() + `","status_code":` + strconv.Itoa(a.Status) + `,"msg":"refused by the traffic policy","details":{}}` + "\n")
	}
	return "application/json", b.Bytes()
}
