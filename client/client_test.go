package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/schemas"
)

// Sample ARNs the API takes.
const (
	kinesisARN  = "arn:aws:kinesis:us-east-1:123456789012:stream/events"
	firehoseARN = "arn:aws:firehose:us-east-1:123456789012:deliverystream/events"
	logGroupARN = "arn:aws:logs:us-east-1:123456789012:log-group:events"
	roleARN     = "arn:aws:iam::123456789012:role/sluice"
)

func ptr[T any](v T) *T { return &v }

// encode encodes v as the API writes its bodies: without escaping <, >
// and &.
func encode(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// sameBytes checks that v, decoded from the API's reply raw, encodes to
// raw again: that the type has every field of the API's answer, in its
// order and shape.
func sameBytes(t *testing.T, what string, raw []byte, v any) {
	t.Helper()
	if got, want := encode(t, v), bytes.TrimRight(raw, "\r\n"); !bytes.Equal(got, want) {
		t.Errorf("%s: the typed value encodes to\n%s\nthe API answered\n%s", what, got, want)
	}
}

// TestTypesAreTheAPIs round-trips real answers of the API through the
// types: every family's create, get, update and list answers, a
// destination's status, test write, dead letters and redrive, a
// subscription's replays, and the error body, encode again to the bytes
// the API sent, so that a field the API adds, renames or reorders fails
// here.
func TestTypesAreTheAPIs(t *testing.T) {
	fake := &delivery{}
	stack := apitest.Start(t, apitest.WithDeps(func(deps *api.Deps, js jetstream.JetStream) {
		deps.DeliveryStatus, deps.DestinationTrial, deps.DeadLetters = fake, fake, fake
		stream, err := js.Stream(context.Background(), pipeline.EventsStream)
		if err != nil {
			t.Fatal(err)
		}
		deps.Replays = pipeline.NewReplayer(stream, deps.Subscriptions.(*store.Store).Replays(), deps.Subscriptions)
	}))
	c := client.New(stack.URL, stack.Token)
	ctx := t.Context()
	var raw []byte

	// API keys, the token of the new one included, HTML characters kept.
	keys := c.APIKeys()
	key, err := keys.Create(ctx, apiwire.APIKeyInput{Description: ptr("edge <eu> & co"), Metadata: ptr(`{"team":"edge"}`)}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if key.Token == nil || !strings.HasPrefix(*key.Token, "sk_") || key.Description != "edge <eu> & co" {
		t.Fatalf("created key %+v", key)
	}
	sameBytes(t, "api key create", raw, key)
	key, err = keys.Update(ctx, key.ID, apiwire.APIKeyInput{Metadata: ptr("m")}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if key.Token != nil || key.Description != "edge <eu> & co" || key.Metadata != "m" {
		t.Fatalf("updated key %+v", key)
	}
	sameBytes(t, "api key update", raw, key)

	// An agent ingress with a policy, then without, and listed.
	ingresses := c.AgentIngresses()
	ingress, err := ingresses.Create(ctx, apiwire.AgentIngressInput{Domain: ptr("Ingress.Example.com"), Description: ptr("edge <eu> & co"),
		CertificateManagementPolicy: ptr(&apiwire.CertificatePolicy{Authority: "letsencrypt", PrivateKeyType: "ecdsa"})}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if !strings.HasPrefix(ingress.ID, "agin_") || ingress.Domain != "ingress.example.com" || ingress.CertificateManagementStatus == nil {
		t.Fatalf("created agent ingress %+v", ingress)
	}
	sameBytes(t, "agent ingress create", raw, ingress)
	ingress, err = ingresses.Update(ctx, ingress.ID, apiwire.AgentIngressInput{CertificateManagementPolicy: ptr[*apiwire.CertificatePolicy](nil)}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if ingress.CertificateManagementPolicy != nil || ingress.CertificateManagementStatus != nil || ingress.Description != "edge <eu> & co" {
		t.Fatalf("updated agent ingress %+v", ingress)
	}
	sameBytes(t, "agent ingress update", raw, ingress)
	ingressPage, err := ingresses.List(ctx, client.ListOptions{}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "agent ingress list", raw, ingressPage)

	// Application sessions, as the edge records them (one of an HTTPS
	// edge, one agent-initiated), read, listed and revoked.
	sessions := c.AppSessions()
	for _, edge := range []string{schemas.NewID("edghts_"), ""} {
		in := store.AppSession{PublicURL: "https://app.example.com", ApplicationUserID: schemas.NewID(schemas.PrefixAppUser), EndpointID: schemas.NewID(schemas.PrefixEndpoint),
			BrowserSession: store.BrowserSession{IPAddress: "2001:db8::1", UserAgent: store.UserAgent{Raw: "Mozilla/5.0 <x> & co", BrowserName: "Firefox"},
				Location: store.Location{CountryCode: "NZ", Latitude: -41.2865, Longitude: 174.7762, LatLongRadiusKm: 5}},
			ExpiresAt: time.Now().Add(time.Hour)}
		if edge != "" {
			in.EdgeID, in.RouteID = edge, schemas.NewID("edghtsrt_")
		}
		recorded, err := stack.Store.RecordAppSession(ctx, stack.AccountID, in)
		check.ErrorContains(t, err, "")
		session, err := sessions.Get(ctx, recorded.ID, client.Reply(&raw))
		check.ErrorContains(t, err, "")
		if session.ID != recorded.ID || (session.Edge == nil) != (edge == "") || session.BrowserSession.Location.CountryCode != "NZ" {
			t.Fatalf("application session %+v", session)
		}
		sameBytes(t, "application session get", raw, session)
	}
	sessionPage, err := sessions.List(ctx, client.ListOptions{}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if len(sessionPage.Items) != 2 {
		t.Fatalf("application sessions %+v", sessionPage)
	}
	sameBytes(t, "application session list", raw, sessionPage)
	check.ErrorContains(t, sessions.Delete(ctx, sessionPage.Items[0].ID), "")

	// A bot user, created active, then deactivated and listed.
	bots := c.BotUsers()
	bot, err := bots.Create(ctx, apiwire.BotUserInput{Name: ptr("ci <deployer> & co")}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if !strings.HasPrefix(bot.ID, "bot_") || !bot.Active || bot.Name != "ci <deployer> & co" {
		t.Fatalf("created bot user %+v", bot)
	}
	sameBytes(t, "bot user create", raw, bot)
	inactive := false
	bot, err = bots.Update(ctx, bot.ID, apiwire.BotUserInput{Active: &inactive}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if bot.Active || bot.Name != "ci <deployer> & co" {
		t.Fatalf("updated bot user %+v", bot)
	}
	sameBytes(t, "bot user update", raw, bot)
	botPage, err := bots.List(ctx, client.ListOptions{}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "bot user list", raw, botPage)

	// A tunnel credential owned by the bot user, its token once, then
	// without owner and listed.
	creds := c.Credentials()
	cred, err := creds.Create(ctx, apiwire.CredentialInput{Description: ptr("edge <eu> & co"), ACL: &[]string{"bind:*.example.com"}, OwnerID: &bot.ID}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if cred.Token == nil || !strings.HasPrefix(*cred.Token, "ct_") || cred.OwnerID == nil || *cred.OwnerID != bot.ID || len(cred.ACL) != 1 {
		t.Fatalf("created credential %+v", cred)
	}
	sameBytes(t, "credential create", raw, cred)
	cred, err = creds.Update(ctx, cred.ID, apiwire.CredentialInput{OwnerID: ptr(""), ACL: &[]string{}}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if cred.Token != nil || cred.OwnerID != nil || cred.ACL == nil || len(cred.ACL) != 0 {
		t.Fatalf("updated credential %+v", cred)
	}
	sameBytes(t, "credential update", raw, cred)
	credPage, err := creds.List(ctx, client.ListOptions{}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "credential list", raw, credPage)
	// Reserved domains: a custom wildcard with its policy and job, changed,
	// its policy deleted, listed.
	domains := c.ReservedDomains()
	rd, err := domains.Create(ctx, apiwire.ReservedDomainInput{Domain: ptr("*.Edge.example.com"), Region: ptr("eu"), Description: ptr("<edge> & co")}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if !strings.HasPrefix(rd.ID, "rd_") || rd.Domain != "*.edge.example.com" || rd.CertificateManagementStatus == nil || rd.ACMEChallengeCNAMETarget == nil {
		t.Fatalf("created reserved domain %+v", rd)
	}
	sameBytes(t, "reserved domain create", raw, rd)
	rd, err = domains.Update(ctx, rd.ID, apiwire.ReservedDomainInput{CertificateManagementPolicy: &apiwire.CertificatePolicy{Authority: "letsencrypt", PrivateKeyType: "rsa"}}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if rd.CertificateManagementPolicy.PrivateKeyType != "rsa" || *rd.Region != "eu" {
		t.Fatalf("updated reserved domain %+v", rd)
	}
	sameBytes(t, "reserved domain update", raw, rd)
	check.ErrorContains(t, c.DeleteReservedDomainCertPolicy(ctx, rd.ID), "")
	rd, err = domains.Get(ctx, rd.ID, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if rd.CertificateManagementPolicy != nil || rd.CertificateManagementStatus != nil {
		t.Fatalf("after deleting the policy %+v", rd)
	}
	sameBytes(t, "reserved domain get", raw, rd)
	rdPage, err := domains.List(ctx, client.ListOptions{}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "reserved domain list", raw, rdPage)

	// An HTTPS edge on the wildcard, a route of it with both modules, and
	// their lists.
	edges := c.HTTPSEdges()
	edge, err := edges.Create(ctx, apiwire.HTTPSEdgeInput{Description: ptr("<edge> & co"), Hostports: &[]string{"a.edge.example.com:443"}}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if !strings.HasPrefix(edge.ID, "edghts_") || len(edge.Hostports) != 1 {
		t.Fatalf("created HTTPS edge %+v", edge)
	}
	sameBytes(t, "HTTPS edge create", raw, edge)
	edgePage, err := edges.List(ctx, client.ListOptions{}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "HTTPS edge list", raw, edgePage)
	routes := c.HTTPSEdgeRoutes(edge.ID)
	route, err := routes.Create(ctx, apiwire.HTTPSEdgeRouteInput{MatchType: ptr("path_prefix"), Match: ptr("/<api>&")}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "HTTPS edge route create", raw, route)
	breaker, err := c.CircuitBreaker(edge.ID, route.ID).Put(ctx, apiwire.CircuitBreakerInput{ErrorThresholdPercentage: ptr(0.25)}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if !breaker.Enabled || breaker.ErrorThresholdPercentage != 0.25 || breaker.NumBuckets != 10 {
		t.Fatalf("circuit breaker %+v", breaker)
	}
	sameBytes(t, "circuit breaker put", raw, breaker)
	converter, err := c.WebsocketTCPConverter(edge.ID, route.ID).Put(ctx, apiwire.WebsocketTCPConverterInput{}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "websocket TCP converter put", raw, converter)
	route, err = routes.Get(ctx, route.ID, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	if route.CircuitBreaker == nil || route.WebsocketTCPConverter == nil {
		t.Fatalf("route with its modules %+v", route)
	}
	sameBytes(t, "HTTPS edge route get", raw, route)
	routePage, err := routes.List(ctx, client.ListOptions{}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "HTTPS edge route list", raw, routePage)
	check.ErrorContains(t, c.CircuitBreaker(edge.ID, route.ID).Delete(ctx), "")
	var missing *client.Error
	if _, err := c.CircuitBreaker(edge.ID, route.ID).Get(ctx); !errors.As(err, &missing) || missing.Status != 404 || missing.Code != "ERR_SLUICE_431" {
		t.Fatalf("a module deleted: %v", err)
	}

	// Destinations of every target type, by role and by access key, whose
	// secret is never answered.
	dests := c.EventDestinations()
	var destIDs []string
	for _, target := range []apiwire.Target{
		{Type: "kinesis", ARNField: "stream_arn", ARN: kinesisARN, Auth: apiwire.Auth{Role: &apiwire.Role{RoleARN: roleARN}}},
		{Type: "firehose", ARNField: "delivery_stream_arn", ARN: firehoseARN, Auth: apiwire.Auth{Creds: &apiwire.Creds{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG"}}},
		{Type: "cloudwatch_logs", ARNField: "log_group_arn", ARN: logGroupARN, Auth: apiwire.Auth{Role: &apiwire.Role{RoleARN: roleARN}}},
	} {
		d, err := dests.Create(ctx, apiwire.DestinationInput{Description: ptr("to " + target.Type), Target: &target}, client.Reply(&raw))
		check.ErrorContains(t, err, "")
		sameBytes(t, target.Type+" create", raw, d)
		if bytes.Contains(raw, []byte("wJalrXUtnFEMI")) {
			t.Errorf("the API answered the secret: %s", raw)
		}
		want := target
		if want.Auth.Creds != nil {
			want.Auth.Creds = &apiwire.Creds{AccessKeyID: target.Auth.Creds.AccessKeyID}
		}
		if d.Target.Type != want.Type || d.Target.ARNField != want.ARNField || d.Target.ARN != want.ARN || !sameJSON(d.Target.Auth, want.Auth) || d.Format != "json" {
			t.Errorf("%s: created %+v", target.Type, d)
		}
		got, err := dests.Get(ctx, d.ID, client.Reply(&raw))
		check.ErrorContains(t, err, "")
		sameBytes(t, target.Type+" get", raw, got)
		destIDs = append(destIDs, d.ID)
	}

	// A subscription whose sources have filters and fields, and its sources.
	subs := c.EventSubscriptions()
	sub, err := subs.Create(ctx, apiwire.SubscriptionInput{
		Description: ptr("requests"),
		Sources: &[]apiwire.SourceInput{
			{Type: "http_request_complete.v0"},
			{Type: "tcp_connection_closed.v0", Filter: "ev.conn.server_port == 443 && ev.conn.client_ip != '10.0.0.1'", Fields: []string{"conn.client_ip"}},
		},
		DestinationIDs: &destIDs,
	}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "subscription create", raw, sub)
	if len(sub.Sources) != 2 || len(sub.Destinations) != 3 || sub.Destinations[0].ID != destIDs[0] {
		t.Fatalf("created subscription %+v", sub)
	}
	sources := c.Sources(sub.ID)
	source, err := sources.Update(ctx, "http_request_complete.v0", apiwire.SourceUpdate{Filter: ptr("ev.conn.server_port < 1024 && ev.conn.server_name != \"\"")}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "source update", raw, source)
	if _, err := subs.Create(ctx, apiwire.SubscriptionInput{Sources: &[]apiwire.SourceInput{{Type: "api_key_created.v0"}}, DestinationIDs: &destIDs}); err != nil {
		t.Fatal(err)
	}
	list, err := sources.List(ctx, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "source list", raw, list)

	// A destination's status and test write: the first answers with every
	// field set, the next with those that may be null unset.
	for i := range 2 {
		status, err := c.DestinationStatus(ctx, destIDs[0], client.Reply(&raw))
		check.ErrorContains(t, err, "")
		sameBytes(t, "destination status", raw, status)
		tested, err := c.TestDestination(ctx, destIDs[0], client.Reply(&raw))
		check.ErrorContains(t, err, "")
		sameBytes(t, "destination test", raw, tested)
		if i == 0 && (status.LastError == nil || status.LastError.Code == nil || status.LastSuccessAt == nil || tested.Class == nil) ||
			i == 1 && (status.LastError != nil || status.LastSuccessAt != nil || tested.Result != "delivered" || tested.Class != nil) {
			t.Errorf("answer %d: status %+v, test %+v", i, status, tested)
		}
	}

	// Its dead letters, a page of one at a time, the event of the second
	// not JSON, and a redrive of one and of all.
	deadLetters := c.DeadLetters(destIDs[0])
	letterPage, err := deadLetters.List(ctx, client.ListOptions{Limit: 1}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "dead letters first page", raw, letterPage)
	if len(letterPage.Items) != 1 || letterPage.Items[0].ID != "dl_42" || letterPage.NextPageURI == nil {
		t.Fatalf("first page of dead letters %s", raw)
	}
	letterPage, err = deadLetters.Next(ctx, letterPage, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "dead letters last page", raw, letterPage)
	if len(letterPage.Items) != 1 || letterPage.Items[0].ID != "dl_7" || letterPage.NextPageURI != nil {
		t.Fatalf("last page of dead letters %s", raw)
	}
	for _, in := range []*apiwire.RedriveInput{{IDs: &[]string{"dl_42"}}, nil} {
		redriven, err := deadLetters.Redrive(ctx, in, client.Reply(&raw))
		check.ErrorContains(t, err, "")
		sameBytes(t, "redrive", raw, redriven)
		if redriven.Redriven != 1 || len(redriven.Failures) != 1 || redriven.Failures[0].ID != "dl_42" {
			t.Fatalf("redrive %s", raw)
		}
	}
	// A delete of one letter, of one the destination lacks, and of those a
	// filter picks, twice: from the oldest, then after where it stopped.
	check.ErrorContains(t, deadLetters.Delete(ctx, "dl_42"), "")
	var notFound *client.Error
	if err := deadLetters.Delete(ctx, "dl_8"); !errors.As(err, &notFound) || notFound.Status != http.StatusNotFound {
		t.Fatalf("deleting a letter the destination lacks: %v, want a 404", err)
	}
	class := "too_large"
	in := apiwire.DeadLetterFilter{Class: &class}
	for i, wantNext := range []bool{true, false} {
		deleted, err := deadLetters.DeleteMatching(ctx, in, client.Reply(&raw))
		check.ErrorContains(t, err, "")
		sameBytes(t, "delete dead letters", raw, deleted)
		if deleted.Deleted != 1 || (deleted.NextAfterID != nil) != wantNext {
			t.Fatalf("delete %d of dead letters: %s", i, raw)
		}
		in.AfterID = deleted.NextAfterID
	}
	if want := []deletion{{pipeline.DeadLetterFilter{Class: class}, 0}, {pipeline.DeadLetterFilter{Class: class}, 7}}; !slices.Equal(fake.deleted, want) {
		t.Fatalf("the API was asked to delete %+v, want %+v", fake.deleted, want)
	}

	// A replay of the subscription, and its list.
	replays := c.Replays(sub.ID)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	replay, err := replays.Start(ctx, apiwire.ReplayInput{Since: &since}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "replay start", raw, replay)
	if replay.SubscriptionID != sub.ID || !strings.HasSuffix(replay.URI, replays.Path()+"/"+replay.ID) {
		t.Fatalf("replay %+v", replay)
	}
	replay, err = replays.Get(ctx, replay.ID, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "replay get", raw, replay)
	replayPage, err := replays.List(ctx, client.ListOptions{}, client.Reply(&raw))
	check.ErrorContains(t, err, "")
	sameBytes(t, "replay list", raw, replayPage)
	if len(replayPage.Items) != 1 || replayPage.Items[0].ID != replay.ID {
		t.Fatalf("replays %s", raw)
	}

	// Pages of each family, the last with next_page_uri null.
	for name, list := range map[string]func(client.ListOptions, ...client.CallOption) (any, *string, error){
		"api keys": func(o client.ListOptions, opts ...client.CallOption) (any, *string, error) {
			p, err := keys.List(ctx, o, opts...)
			return p, p.NextPageURI, err
		},
		"destinations": func(o client.ListOptions, opts ...client.CallOption) (any, *string, error) {
			p, err := dests.List(ctx, o, opts...)
			return p, p.NextPageURI, err
		},
		"subscriptions": func(o client.ListOptions, opts ...client.CallOption) (any, *string, error) {
			p, err := subs.List(ctx, o, opts...)
			return p, p.NextPageURI, err
		},
	} {
		page, next, err := list(client.ListOptions{Limit: 1}, client.Reply(&raw))
		check.ErrorContains(t, err, "")
		sameBytes(t, name+" first page", raw, page)
		if next == nil {
			t.Errorf("%s: the first page of one has no next_page_uri: %s", name, raw)
		}
		page, next, err = list(client.ListOptions{}, client.Reply(&raw))
		check.ErrorContains(t, err, "")
		sameBytes(t, name+" whole page", raw, page)
		if next != nil {
			t.Errorf("%s: the only page has a next_page_uri: %s", name, raw)
		}
	}

	// The error body.
	var apiErr *client.Error
	if _, err := dests.Get(ctx, "ed_2JmWb3M6jx9mXzJ1NhuW9sFzTnD"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("get of no destination: %v", err)
	}
	resp, err := http.Post(stack.URL+apiwire.APIKeysPath, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw = readAll(t, resp)
	var body client.ErrorBody
	if err := json.Unmarshal(raw, &body); err != nil || body.StatusCode != resp.StatusCode || resp.StatusCode < 400 || body.ErrorCode == "" || body.Details["operation_id"] == "" {
		t.Fatalf("error body %s: %+v, %v", raw, body, err)
	}
	sameBytes(t, "error body", raw, body)
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestFamily runs each verb of a family against the API: ListAll follows
// next_page_uri across pages, newest first, and Delete deletes.
func TestFamily(t *testing.T) {
	stack := apitest.Start(t)
	c := client.New(stack.URL, stack.Token)
	ctx := t.Context()
	keys := c.APIKeys()
	var apiErr *client.Error
	created := []string{stack.KeyID}
	for i := range 4 {
		k, err := keys.Create(ctx, apiwire.APIKeyInput{Description: ptr(strings.Repeat("k", i+1))})
		check.ErrorContains(t, err, "")
		created = append(created, k.ID)
	}
	slices.Reverse(created)
	all, err := keys.ListAll(ctx, client.ListOptions{Limit: 2})
	check.ErrorContains(t, err, "")
	if all.NextPageURI != nil || !strings.HasSuffix(all.URI, "/api_keys?limit=2") || all.Key != "keys" {
		t.Errorf("ListAll: %+v", all)
	}
	var ids []string
	for _, k := range all.Items {
		ids = append(ids, k.ID)
	}
	if !slices.Equal(ids, created) {
		t.Fatalf("ListAll by pages of 2: %v, want %v", ids, created)
	}
	first, err := keys.List(ctx, client.ListOptions{Limit: 2})
	check.ErrorContains(t, err, "")
	second, err := keys.Next(ctx, first)
	check.ErrorContains(t, err, "")
	if len(second.Items) != 2 || second.Items[0].ID != created[2] {
		t.Errorf("second page %+v", second)
	}
	last, err := keys.List(ctx, client.ListOptions{BeforeID: created[3]})
	check.ErrorContains(t, err, "")
	if _, err := keys.Next(ctx, last); !errors.Is(err, client.ErrLastPage) {
		t.Errorf("Next of the last page: %v", err)
	}
	// A filter: the descriptions of two k's or more, by pages of one.
	filtered, err := keys.ListAll(ctx, client.ListOptions{Limit: 1, Filter: `obj.description.startsWith("kk")`})
	check.ErrorContains(t, err, "")
	ids = nil
	for _, k := range filtered.Items {
		ids = append(ids, k.ID)
	}
	if !slices.Equal(ids, created[:3]) || !strings.Contains(filtered.URI, "filter=obj.description.startsWith") {
		t.Errorf("ListAll with a filter: %v (%s), want %v", ids, filtered.URI, created[:3])
	}
	_, err = keys.List(ctx, client.ListOptions{Filter: `obj.descripton == ""`})
	if !errors.As(err, &apiErr) || apiErr.Code != "ERR_SLUICE_335" {
		t.Errorf("List with a bad filter: %v", err)
	}

	check.ErrorContains(t, keys.Delete(ctx, created[0]), "")
	_, err = keys.Get(ctx, created[0])
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || apiErr.Code == "" || apiErr.OperationID == "" {
		t.Fatalf("get of a deleted key: %v", err)
	}
}

// TestErrorText checks the words of an error reply: the API's, and a
// proxy's that is not the API's.
func TestErrorText(t *testing.T) {
	raw := []byte(`{"error_code":"ERR_SLUICE_333","status_code":400,"msg":"sources[0].type: \"x\" is not an event kind","details":{"operation_id":"op_2","field":"sources[0].type","subscriptions":"[\"esb_1\"]"}}`)
	err := client.ParseError("POST", "http://h/event_subscriptions", 400, raw)
	want := `ERR_SLUICE_333 (400): sources[0].type: "x" is not an event kind [details.field=sources[0].type] [details.subscriptions=["esb_1"]] (operation op_2)`
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	err = client.ParseError("GET", "http://h/api_keys", 502, []byte("<html>"+strings.Repeat("down ", 100)))
	if got := err.Error(); !strings.HasPrefix(got, "GET http://h/api_keys: HTTP 502, not an answer of the sluice API: <html>down") || !strings.HasSuffix(got, "...") {
		t.Errorf("error of a proxy: %s", got)
	}
}

// TestTransportError checks that a request that gets no answer ends at
// the client's timeout, or when its context does, saying which, and that
// an unreachable API is a TransportError with the client's hint.
func TestTransportError(t *testing.T) {
	stop := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(silent.Close)
	t.Cleanup(func() { close(stop) })

	c := client.New(silent.URL, "k", client.WithTimeout(50*time.Millisecond), client.WithUnreachableHint("check --api-url"))
	_, err := c.APIKeys().List(t.Context(), client.ListOptions{})
	var transportErr *client.TransportError
	if !errors.As(err, &transportErr) || err.Error() != "GET "+silent.URL+"/api_keys: no answer within 50ms; check --api-url" {
		t.Errorf("error of a silent API: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err = client.New(silent.URL, "k").APIKeys().Get(ctx, "ak_1"); !errors.Is(err, context.Canceled) || errors.As(err, &transportErr) {
		t.Errorf("error %v with the context canceled, want context.Canceled", err)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	err = client.New(closed.URL, "k", client.WithUnreachableHint("check --api-url")).APIKeys().Delete(t.Context(), "ak_1")
	if !errors.As(err, &transportErr) || !strings.HasPrefix(err.Error(), "DELETE "+closed.URL+"/api_keys/ak_1: ") || !strings.HasSuffix(err.Error(), "; check --api-url") || strings.Count(err.Error(), closed.URL) != 1 {
		t.Errorf("error of an unreachable API: %v", err)
	}
}

// TestDecodeError checks that a 2xx reply that is not the call's type is
// a DecodeError holding the reply.
func TestDecodeError(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html>sluice</html>"))
	}))
	t.Cleanup(proxy.Close)
	_, err := client.New(proxy.URL, "k").EventSubscriptions().Get(t.Context(), "esb_1")
	var decodeErr *client.DecodeError
	if !errors.As(err, &decodeErr) || string(decodeErr.Body) != "<html>sluice</html>" || decodeErr.URL != proxy.URL+"/event_subscriptions/esb_1" {
		t.Fatalf("error %v", err)
	}
}
