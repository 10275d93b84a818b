package emulator

import (
	"bytes"
	"crypto/rand"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The query protocol of STS: a form-encoded POST answered in XML.
const (
	queryContentType = "application/x-www-form-urlencoded"
	stsVersion       = "2011-06-15"
	stsNamespace     = "https://sts.amazonaws.com/doc/2011-06-15/"
)

// STS limits, from the API reference of AssumeRole.
const (
	stsDefaultDuration = time.Hour
	stsMinDuration     = 15 * time.Minute
	stsMaxDuration     = 12 * time.Hour
	// stsKeptAssumptions bounds the AssumeRole calls AssumedRoles returns.
	stsKeptAssumptions = 1000
)

var (
	// roleARNPattern is an IAM role's ARN: its account and its name (the
	// last segment of its path).
	roleARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:iam::(\d{12}):role/(?:[\x21-\x7e]*/)?([\w+=,.@-]{1,64})$`)
	// sessionNamePattern is a RoleSessionName.
	sessionNamePattern = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	// externalIDPattern is an ExternalId, of 2 to 1224 characters.
	externalIDPattern = regexp.MustCompile(`^[\w+=,.@:/-]+$`)
)

// AssumedRole is an AssumeRole call the emulator answered with
// credentials: what it was asked, and the access key it issued.
type AssumedRole struct {
	RoleARN         string `json:"role_arn"`
	RoleSessionName string `json:"role_session_name"`
	// ExternalID is the call's ExternalId, "" when it gave none.
	ExternalID string `json:"external_id"`
	// CallerAccessKeyID is the access key that signed the call.
	CallerAccessKeyID string `json:"caller_access_key_id"`
	// AccessKeyID is the temporary access key issued; calls signed with
	// it are the role's (GetCallerIdentity says so).
	AccessKeyID string    `json:"access_key_id"`
	Time        time.Time `json:"time"`
	Expiration  time.Time `json:"expiration"`
}

// stsStore holds the AssumeRole calls answered and the sessions issued.
type stsStore struct {
	mu sync.Mutex
	// assumed are the newest stsKeptAssumptions calls, oldest first.
	assumed []AssumedRole
	// sessions maps an issued access key to its call, until it expires
	// or the call leaves assumed.
	sessions map[string]AssumedRole
}

func newSTSStore() *stsStore {
	return &stsStore{sessions: map[string]AssumedRole{}}
}

// record keeps an answered AssumeRole call, and forgets the sessions
// expired at now.
func (st *stsStore) record(a AssumedRole, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.assumed) == stsKeptAssumptions {
		delete(st.sessions, st.assumed[0].AccessKeyID)
		st.assumed[0] = AssumedRole{}
		st.assumed = st.assumed[1:]
	}
	st.assumed = append(st.assumed, a)
	for key, s := range st.sessions {
		if !s.Expiration.After(now) {
			delete(st.sessions, key)
		}
	}
	st.sessions[a.AccessKeyID] = a
}

// session returns the AssumeRole call that issued accessKeyID, if any.
func (st *stsStore) session(accessKeyID string) (AssumedRole, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	a, ok := st.sessions[accessKeyID]
	return a, ok
}

func (s *Server) stsOperations() map[string]operation {
	return map[string]operation{
		"AssumeRole":        s.stsAssumeRole,
		"GetCallerIdentity": s.stsGetCallerIdentity,
	}
}

// AssumedRoles returns the AssumeRole calls the emulator answered with
// credentials, oldest first (the newest 1,000): the role, the session name
// and the ExternalId each gave.
func (s *Server) AssumedRoles() []AssumedRole {
	s.sts.mu.Lock()
	defer s.sts.mu.Unlock()
	return append([]AssumedRole(nil), s.sts.assumed...)
}

// serveQuery answers a call of the query protocol: STS's, the only
// service the emulator serves in it.
func (s *Server) serveQuery(w http.ResponseWriter, r *http.Request) {
	requestID := s.requestIDs.next()
	w.Header().Set("x-amzn-RequestId", requestID)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeQueryError(w, requestID, &apiError{Code: "RequestEntityTooLarge", Message: fmt.Sprintf("Request body over %d bytes.", maxRequestBytes), Status: http.StatusRequestEntityTooLarge})
			return
		}
		// Never an empty 200 the client takes for success; a client that
		// went away reads nothing.
		writeQueryError(w, requestID, unreadableBody(err))
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		writeQueryError(w, requestID, clientError("MalformedQueryString", "The body is not a form: %v.", err))
		return
	}
	action := form.Get("Action")
	if action == "" {
		writeQueryError(w, requestID, clientError("MissingAction", "Missing Action: a call of the query protocol names its operation in the Action parameter."))
		return
	}
	if svc := scopeService(r); svc != "" && svc != string(ServiceSTS) {
		writeQueryError(w, requestID, clientError("InvalidAction", "Operation %s of service %s is not served by this emulator: it serves STS in the query protocol, and Kinesis, Firehose and CloudWatch Logs in the JSON protocol.", action, svc))
		return
	}
	scope, apiErr := checkAuthorization(r, string(ServiceSTS))
	if apiErr != nil {
		writeQueryError(w, requestID, queryAuthError(apiErr))
		return
	}
	fn, ok := s.operations[ServiceSTS][action]
	if !ok {
		writeQueryError(w, requestID, unknownOperation(s, ServiceSTS, action))
		return
	}
	if v := form.Get("Version"); v != stsVersion {
		writeQueryError(w, requestID, clientError("InvalidAction", "Could not find operation %s for version %s: STS's version is %s.", action, v, stsVersion))
		return
	}
	c := &call{ctx: r.Context(), server: s, service: ServiceSTS, op: action, region: scope.Region, accessKeyID: scope.AccessKeyID, form: form}
	out, apiErr := s.run(c, namedOperation{name: action, fn: fn})
	switch {
	case apiErr == errClientGone:
	case apiErr != nil:
		writeQueryError(w, requestID, apiErr)
	default:
		writeQueryOutput(w, requestID, action, out)
	}
}

// scopeService returns the service of a request's SigV4 credential scope,
// "" when it has none.
func scopeService(r *http.Request) string {
	_, rest, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	credential, _, _ := strings.Cut(rest, ",")
	if m := scopePattern.FindStringSubmatch(strings.TrimSpace(credential)); m != nil {
		return m[4]
	}
	return ""
}

// queryAuthError is an authorization error as the query protocol names
// it: 403 MissingAuthenticationToken, 400 IncompleteSignature.
func queryAuthError(e *apiError) *apiError {
	out := *e
	out.Code = strings.TrimSuffix(e.Code, "Exception")
	if out.Code == "MissingAuthenticationToken" {
		out.Status = http.StatusForbidden
	}
	return &out
}

// writeQueryOutput writes the XML answer of a query-protocol call:
// <ActionResponse><ActionResult>out</ActionResult><ResponseMetadata>.
func writeQueryOutput(w http.ResponseWriter, requestID, action string, out any) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<%sResponse xmlns="%s">`, action, stsNamespace)
	if err := xml.NewEncoder(&b).EncodeElement(out, xml.StartElement{Name: xml.Name{Local: action + "Result"}}); err != nil {
		writeQueryError(w, requestID, internalFailure())
		return
	}
	fmt.Fprintf(&b, `<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>`, requestID, action)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}

// writeQueryError writes an error of the query protocol:
// <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/>.
func writeQueryError(w http.ResponseWriter, requestID string, e *apiError) {
	type errorBody struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	answer := struct {
		XMLName   xml.Name  `xml:"ErrorResponse"`
		Namespace string    `xml:"xmlns,attr"`
		Error     errorBody `xml:"Error"`
		RequestID string    `xml:"RequestId"`
	}{Namespace: stsNamespace, Error: errorBody{Type: "Sender", Code: e.Code, Message: e.Message}, RequestID: requestID}
	if e.Status >= 500 {
		answer.Error.Type = "Receiver"
	}
	body, _ := xml.Marshal(answer)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// stsValidation is STS's 400 ValidationError.
func stsValidation(value, path, constraint string) *apiError {
	return clientError("ValidationError", "1 validation error detected: Value %s at '%s' failed to satisfy constraint: Member %s", value, path, constraint)
}

type assumeRoleResult struct {
	Credentials struct {
		AccessKeyId     string `xml:"AccessKeyId"`
		SecretAccessKey string `xml:"SecretAccessKey"`
		SessionToken    string `xml:"SessionToken"`
		Expiration      string `xml:"Expiration"`
	} `xml:"Credentials"`
	AssumedRoleUser struct {
		AssumedRoleId string `xml:"AssumedRoleId"`
		Arn           string `xml:"Arn"`
	} `xml:"AssumedRoleUser"`
	PackedPolicySize int `xml:"PackedPolicySize"`
}

// stsAssumeRole answers AssumeRole with temporary credentials for any
// role, and records the call (AssumedRoles). A fault on the role's name
// (or on every role, AnyResource) can refuse it: AccessDenied always, and
// ExternalID when the call's ExternalId is another, as AWS refuses a role
// whose trust policy requires an sts:ExternalId.
func (s *Server) stsAssumeRole(c *call) (any, error) {
	roleARN, session, duration := c.form.Get("RoleArn"), c.form.Get("RoleSessionName"), stsDefaultDuration
	externalID := c.form.Get("ExternalId")
	switch {
	case roleARN == "":
		return nil, stsValidation("null", "roleArn", "must not be null")
	case session == "":
		return nil, stsValidation("null", "roleSessionName", "must not be null")
	case len(roleARN) < 20 || len(roleARN) > 2048:
		return nil, stsValidation("'"+roleARN+"'", "roleArn", "must have length between 20 and 2048")
	case !sessionNamePattern.MatchString(session):
		return nil, stsValidation("'"+session+"'", "roleSessionName", "must satisfy regular expression pattern: [\\w+=,.@-]* and have length between 2 and 64")
	case c.form.Has("ExternalId") && (len(externalID) < 2 || len(externalID) > 1224 || !externalIDPattern.MatchString(externalID)):
		return nil, stsValidation("'"+externalID+"'", "externalId", "must satisfy regular expression pattern: [\\w+=,.@:\\/-]* and have length between 2 and 1224")
	}
	if d := c.form.Get("DurationSeconds"); d != "" {
		seconds, err := strconv.Atoi(d)
		if err != nil || time.Duration(seconds)*time.Second < stsMinDuration || time.Duration(seconds)*time.Second > stsMaxDuration {
			return nil, stsValidation("'"+d+"'", "durationSeconds", "must have value between 900 and 43200")
		}
		duration = time.Duration(seconds) * time.Second
	}
	m := roleARNPattern.FindStringSubmatch(roleARN)
	if m == nil {
		return nil, stsValidation("'"+roleARN+"'", "roleArn", "must be the ARN of an IAM role: arn:aws:iam::ACCOUNT:role/NAME")
	}
	account, roleName := m[1], m[2]
	if err := c.enter(roleName); err != nil {
		return nil, err
	}
	if c.fault != nil && c.fault.ExternalID != "" && externalID != c.fault.ExternalID {
		return nil, stsAccessDenied(c, roleARN, fmt.Sprintf("the emulator was told that the role's trust policy requires ExternalId %q; the call gave %q", c.fault.ExternalID, externalID))
	}
	now := s.now()
	a := AssumedRole{
		RoleARN:           roleARN,
		RoleSessionName:   session,
		ExternalID:        externalID,
		CallerAccessKeyID: c.accessKeyID,
		AccessKeyID:       "ASIA" + rand.Text()[:16],
		Time:              now,
		Expiration:        now.Add(duration).Truncate(time.Second),
	}
	s.sts.record(a, now)
	var out assumeRoleResult
	out.Credentials.AccessKeyId = a.AccessKeyID
	out.Credentials.SecretAccessKey = rand.Text() + rand.Text()[:14]
	out.Credentials.SessionToken = "EMULATOR" + rand.Text() + rand.Text() + rand.Text() + rand.Text()
	out.Credentials.Expiration = a.Expiration.UTC().Format(time.RFC3339)
	out.AssumedRoleUser.AssumedRoleId = uniqueID("AROA", roleARN) + ":" + session
	out.AssumedRoleUser.Arn = "arn:aws:sts::" + account + ":assumed-role/" + roleName + "/" + session
	return out, nil
}

// stsAccessDenied is the 403 AccessDenied of an AssumeRole refused.
func stsAccessDenied(c *call, roleARN, why string) *apiError {
	return &apiError{Code: "AccessDenied", Status: http.StatusForbidden, Message: fmt.Sprintf(
		"User: arn:aws:iam::%s:user/emulator is not authorized to perform: sts:AssumeRole on resource: %s (%s)", c.server.cfg.AccountID, roleARN, why)}
}

type callerIdentityResult struct {
	UserId  string `xml:"UserId"`
	Account string `xml:"Account"`
	Arn     string `xml:"Arn"`
}

// stsGetCallerIdentity answers GetCallerIdentity: the role session of an
// access key AssumeRole issued, else the user "emulator" of
// Config.AccountID.
func (s *Server) stsGetCallerIdentity(c *call) (any, error) {
	if a, ok := s.sts.session(c.accessKeyID); ok {
		m := roleARNPattern.FindStringSubmatch(a.RoleARN)
		return callerIdentityResult{
			UserId:  uniqueID("AROA", a.RoleARN) + ":" + a.RoleSessionName,
			Account: m[1],
			Arn:     "arn:aws:sts::" + m[1] + ":assumed-role/" + m[2] + "/" + a.RoleSessionName,
		}, nil
	}
	return callerIdentityResult{
		UserId:  uniqueID("AIDA", c.accessKeyID),
		Account: s.cfg.AccountID,
		Arn:     "arn:aws:iam::" + s.cfg.AccountID + ":user/emulator",
	}, nil
}

// uniqueID is an IAM unique id of the kind prefix (AROA a role, AIDA a
// user): 17 characters after it, the same for the same name.
func uniqueID(prefix, name string) string {
	h := fnv.New64a()
	h.Write([]byte(name))
	return prefix + strings.ToUpper(fmt.Sprintf("%017x", h.Sum64()))[:17]
}
