package api

import (
	"context"
	"encoding/json"
	"net/http"

	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/desttype"
)

// routeDestinations serves the family of event destinations.
func (s *Server) routeDestinations() {
	d := s.destinations
	route(s, family[store.Destination, destinationInput, destinationInput, destinationBody]{
		applyCreate: destinationInput.apply, applyUpdate: destinationInput.apply,
		spec: declared.EventDestinations(), res: destinationResource, audit: auditDestination,
		create: d.CreateDestination, get: d.GetDestination, list: d.ListDestinations, update: d.UpdateDestination, delete: d.DeleteDestination,
		body:        s.destinationResponse,
		auditObject: func(r *http.Request, d store.Destination) any { return s.destinationAudit(r, d) },
	})
}

// destinationInput is the body of a create or update: the fields sent are
// set, the others nil. Target has the JSON shape of TargetInput, secret
// included.
type destinationInput struct {
	Description *string       `json:"description"`
	Metadata    *string       `json:"metadata"`
	Format      *string       `json:"format"`
	Target      *store.Target `json:"target"`
}

// apply sets the fields of in on d. A target sent with an access key but
// without its secret keeps the stored secret of the same access key id.
func (in destinationInput) apply(d *store.Destination) {
	setSent(&d.Description, in.Description)
	setSent(&d.Metadata, in.Metadata)
	setSent(&d.Format, in.Format)
	if in.Target != nil {
		d.Target = withStoredSecret(*in.Target, d.Target.Auth())
	}
}

// withStoredSecret returns the target sent, with the secret of stored's
// credentials when the credentials sent have the same access key id and no
// secret. It does not change sent's fields.
func withStoredSecret(sent store.Target, stored store.AWSAuth) store.Target {
	auth := sent.Auth()
	if c := auth.Creds; c != nil && c.SecretAccessKey == "" && stored.Creds != nil && stored.Creds.AccessKeyID == c.AccessKeyID {
		kept := *c
		kept.SecretAccessKey = stored.Creds.SecretAccessKey
		auth.Creds = &kept
	}
	return sent.WithAuth(auth)
}

// destinationBody is a destination as the API returns it. It has no field
// for the secret access key, so that no response can carry it.
type destinationBody struct {
	ID          string     `json:"id"`
	URI         string     `json:"uri"`
	CreatedAt   string     `json:"created_at"`
	Description string     `json:"description"`
	Metadata    string     `json:"metadata"`
	Format      string     `json:"format"`
	Target      targetBody `json:"target"`
}

// targetBody is a destination's target as the API shows it:
// {"TYPE": {"auth": ..., "ARN_FIELD": "ARN"}}, the names those of the
// target's type (sinks.TargetType), or {} for no target.
type targetBody struct {
	typ  sinks.TargetType
	arn  string
	auth authBody
}

// MarshalJSON writes the target, without escaping HTML characters, as
// apiconv.WriteJSON writes the rest of a body.
func (b targetBody) MarshalJSON() ([]byte, error) {
	if b.typ.Name == "" {
		return []byte("{}"), nil
	}
	var out jsonText
	out.add("{", b.typ.Name)
	out.add(`:{"auth":`, b.auth)
	out.add(",", b.typ.ARNField)
	out.add(":", b.arn)
	return out.end("}}")
}

type authBody struct {
	Role  *roleBody  `json:"role,omitempty"`
	Creds *credsBody `json:"creds,omitempty"`
}

type roleBody struct {
	RoleARN string `json:"role_arn"`
}

// credsBody is an access key without its secret. SecretAccessKey is nil in
// responses, which have no such field, and null (jsonNull) in audit events,
// which have it always null.
type credsBody struct {
	AccessKeyID     string           `json:"aws_access_key_id"`
	SecretAccessKey *json.RawMessage `json:"aws_secret_access_key,omitempty"`
}

// jsonNull is the JSON null.
var jsonNull = json.RawMessage("null")

// createdAtLayout is the one layout of every time the API shows: RFC
// 3339 in UTC with milliseconds, fixed width, as events' timestamps are
// (format a time in UTC: the layout's Z is a letter).
const createdAtLayout = schemas.TimeLayout

// destinationResponse returns the body of the destination, redacted, with
// its full URL.
func (s *Server) destinationResponse(r *http.Request, d store.Destination) destinationBody {
	d = d.Redacted()
	format := d.Format
	if format == "" {
		format = store.FormatJSON
	}
	return destinationBody{
		ID:          d.ID,
		URI:         s.resourceURI(r, "/event_destinations/"+d.ID),
		CreatedAt:   d.CreatedAt.UTC().Format(createdAtLayout),
		Description: d.Description,
		Metadata:    d.Metadata,
		Format:      format,
		Target:      targetResponse(d.Target),
	}
}

// destinationAudit returns the object of an audit event of the
// destination: its body, with aws_secret_access_key null.
func (s *Server) destinationAudit(r *http.Request, d store.Destination) destinationBody {
	body := s.destinationResponse(r, d)
	if creds := body.Target.auth.Creds; creds != nil {
		creds.SecretAccessKey = &jsonNull
	}
	return body
}

// targetResponse returns the body of the target, whose secret is the
// caller's to remove.
func targetResponse(t store.Target) targetBody {
	typ, ok := desttype.Named(t.Type())
	if !ok {
		return targetBody{}
	}
	return targetBody{typ: typ, arn: t.ARN(), auth: authResponse(t.Auth())}
}

func authResponse(a store.AWSAuth) authBody {
	var b authBody
	if a.Role != nil {
		b.Role = &roleBody{RoleARN: a.Role.RoleARN}
	}
	if a.Creds != nil {
		b.Creds = &credsBody{AccessKeyID: a.Creds.AccessKeyID}
	}
	return b
}

// Destinations keeps the event destinations of accounts. *store.Store
// implements it; see its methods for the errors each returns.
type Destinations interface {
	CreateDestination(ctx context.Context, accountID string, in store.Destination, opts ...store.WriteOption) (store.Destination, error)
	GetDestination(ctx context.Context, accountID, id string) (store.Destination, error)
	ListDestinations(ctx context.Context, accountID string, page store.Page) ([]store.Destination, string, error)
	UpdateDestination(ctx context.Context, accountID, id string, fn func(*store.Destination) error, opts ...store.WriteOption) (store.Destination, error)
	DeleteDestination(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.Destination, error)
}
