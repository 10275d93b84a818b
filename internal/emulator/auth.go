package emulator

import (
	"net/http"
	"regexp"
	"strings"
)

// sigV4Algorithm is the algorithm of a SigV4 Authorization header.
const sigV4Algorithm = "AWS4-HMAC-SHA256"

// scopePattern is the Credential of a SigV4 header: ACCESS_KEY/DATE/REGION/SERVICE/aws4_request.
var scopePattern = regexp.MustCompile(`^([^/]+)/(\d{8})/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request$`)

// signaturePattern is a SigV4 signature: 64 lowercase hex digits.
var signaturePattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// credentialScope is what a request's Authorization header says of its
// signer.
type credentialScope struct {
	AccessKeyID string
	Region      string
	Service     string
}

// checkAuthorization checks that a request carries a SigV4 Authorization
// header of the right form, scoped to service, and returns its credential
// scope. It checks the form only, never the signature: any keys sign.
//
// The errors are those of AWS's JSON front end (kinesalite answers the
// same): no header is 400 MissingAuthenticationTokenException, a header
// lacking a part is 400 IncompleteSignatureException, a credential scoped
// to another service is 400 InvalidSignatureException.
func checkAuthorization(r *http.Request, service string) (credentialScope, *apiError) {
	header := r.Header.Get("Authorization")
	if header == "" {
		if r.URL.Query().Get("X-Amz-Algorithm") != "" {
			return credentialScope{}, clientError("IncompleteSignatureException", "Presigned requests are not supported by this emulator: sign with an Authorization header.")
		}
		return credentialScope{}, clientError("MissingAuthenticationTokenException", "Missing Authentication Token")
	}
	algorithm, rest, _ := strings.Cut(header, " ")
	if algorithm != sigV4Algorithm {
		return credentialScope{}, clientError("IncompleteSignatureException", "Unsupported AWS 'algorithm': '%s'. Authorization=%s", algorithm, header)
	}
	params := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok {
			params[key] = value
		}
	}
	var missing strings.Builder
	for _, name := range []string{"Credential", "Signature", "SignedHeaders"} {
		if params[name] == "" {
			missing.WriteString("Authorization header requires '" + name + "' parameter. ")
		}
	}
	if r.Header.Get("X-Amz-Date") == "" && r.Header.Get("Date") == "" {
		missing.WriteString("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ")
	}
	if missing.Len() > 0 {
		return credentialScope{}, clientError("IncompleteSignatureException", "%sAuthorization=%s", missing.String(), header)
	}
	scope := scopePattern.FindStringSubmatch(params["Credential"])
	if scope == nil {
		return credentialScope{}, clientError("IncompleteSignatureException", "Credential should be of the form ACCESS_KEY/YYYYMMDD/REGION/SERVICE/aws4_request, not '%s'.", params["Credential"])
	}
	if !signaturePattern.MatchString(params["Signature"]) {
		return credentialScope{}, clientError("IncompleteSignatureException", "Signature should be 64 lowercase hexadecimal digits. Authorization=%s", header)
	}
	if !strings.Contains(";"+params["SignedHeaders"]+";", ";host;") {
		return credentialScope{}, clientError("IncompleteSignatureException", "SignedHeaders should include 'host'. Authorization=%s", header)
	}
	if scope[4] != service {
		return credentialScope{}, clientError("InvalidSignatureException", "Credential should be scoped to correct service: '%s'. ", service)
	}
	return credentialScope{AccessKeyID: scope[1], Region: scope[3], Service: scope[4]}, nil
}
