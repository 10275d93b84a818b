package apiconv

import (
	"net/http"
	"strconv"

	"github.com/sluicehq/sluice/trafficpolicy"
)

// PolicyAnswer gives the answers of the front door's traffic policy (a
// deny's, a rate-limit's 429) the API's error shape, for
// trafficpolicy.WithAnswers: a client of the API reads them as it reads
// any other error. Its status is the answer's, and details name the rule
// (and a 429's retry_after) besides the operation id.
func PolicyAnswer(r *http.Request, a trafficpolicy.Answer) (contentType string, body []byte) {
	rule := strconv.Quote(a.Rule)
	code, msg := CodePolicyDenied, "The traffic policy of this server refuses the request (rule "+rule+")."
	details := map[string]string{"operation_id": OperationID(r.Context()), "rule": a.Rule}
	if a.Action == trafficpolicy.ActionRateLimit {
		retryAfter := strconv.FormatInt(a.RetryAfter, 10)
		code = CodePolicyRateLimited
		msg = "The traffic policy of this server limits the rate of these requests (rule " + rule + "): send it again after " + retryAfter + " seconds."
		details["retry_after"] = retryAfter
	}
	body, err := encodeJSON(errorBody{ErrorCode: code.String(), StatusCode: a.Status, Msg: msg, Details: details})
	if err != nil {
		body = encodingFailed
	}
	return "application/json", body
}
