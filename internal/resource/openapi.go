package resource

import "reflect"

// Doc is what docs/openapi.yaml says of a family beyond its fields: the
// names of its schemas and operations, its tag, which operations it has
// and their prose. The command internal/tools/openapigen writes the
// family's two paths, Spec.Path and Spec.Path/{id}, from it.
type Doc struct {
	// Stem and Plural name its schemas and operations: <Stem>Create,
	// <Stem>Update, <Stem>List, the response <Stem>200, and createStem,
	// getStem, updateStem, deleteStem and listPlural.
	Stem, Plural string
	// Tag groups its operations; a tag of the document's tags.
	Tag string
	// Item and Items name one and several of its resources in the prose
	// of the {id} parameter, "The id of the key.", and of a list's
	// before_id, "List the keys older than this one".
	Item, Items string
	// IDSchema is the schema of its ids; <Stem>ID when "".
	IDSchema string
	// IDParameter is the parameter of the document's components that
	// is the {id} of the item path, when paths of its own share it; ""
	// writes the parameter in the path, described with Item.
	IDParameter string
	// Parent is the parameter of the document's components that is the
	// id of the resource a nested family's resources belong to, such as
	// EdgeIDPath; "" for a family at the top. A missing parent is 404 on
	// every operation.
	Parent string
	// Create, List, Get, Update and Delete are its operations: POST and
	// GET of Path, GET, PATCH and DELETE of Path/{id}; nil when it has
	// none.
	Create, List, Get, Update, Delete *Op
	// Schemas is what the document says of the family's schemas; their
	// properties are Schemas.Wire's fields. Its zero value leaves them
	// to docs/openapi/source.yaml.
	Schemas Schemas
}

// Schemas is what openapigen writes the family's schemas from: <Stem>,
// <Stem>Created, <Stem>Create, <Stem>Update and <Stem>List of the
// document's components. Their properties are the JSON fields of the
// types of package apiwire, each described by its doc comment there; a
// field's Field says whether a body takes it, whether it is required at
// create, and whether it is shown once (null in <Stem>, which
// <Stem>Created shows).
type Schemas struct {
	// Wire is the resource as the API returns it, such as
	// apiwire.APIKey; nil when the source writes the schemas.
	Wire reflect.Type
	// Input is the body of its create and update, such as
	// apiwire.APIKeyInput; nil when it has neither.
	Input reflect.Type
	// Resource, Created, Create, Update and List are the descriptions
	// of <Stem>, <Stem>Created (written when Create answers it),
	// <Stem>Create, <Stem>Update ("The fields to change." when "") and
	// <Stem>List.
	Resource, Created, Create, Update, List string
	// Response is the description of the response <Stem>200.
	Response string
	// ID names one resource of the family, article first, in the
	// description of the schema of its ids (Doc.IDSchemaName): "The id
	// of an API key, `ak_` and a KSUID.", whose pattern is Spec.Prefix
	// and a KSUID.
	ID string
}

// Op is an operation of a family.
type Op struct {
	// Summary is its one line.
	Summary string
	// Description is "" or its value in the document: one line, or
	// lines that each end in a newline (a block of the YAML).
	Description string
	// Answer is the success of a create or a list; a get and an update
	// answer the response <Stem>200, a delete the response Deleted.
	Answer Answer
	// Errors are the error statuses beyond those every operation of its
	// kind answers, such as the 409 of a delete that others hold back.
	Errors []int
}

// Answer is the success of a create or a list: Response, a response of
// the document's components, or one written in place, Description and
// Schema (<Stem>List for a list).
type Answer struct {
	Response            string
	Description, Schema string
}

// IDSchemaName returns the schema of the family's ids.
func (d Doc) IDSchemaName() string {
	if d.IDSchema != "" {
		return d.IDSchema
	}
	return d.Stem + "ID"
}

// Families returns every resource family, in the order of the paths of
// docs/openapi.yaml.
func Families() []Spec {
	return []Spec{
		EventSubscriptions(), EventDestinations(), AgentIngresses(), AppSessions(), APIKeys(), BotUsers(),
		Credentials(), HTTPSEdges(), HTTPSEdgeRoutes(), TunnelGroupBackends(), ReservedDomains(),
		TLSCertificates(), TunnelSessions(), Endpoints(),
	}
}
