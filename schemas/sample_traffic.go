package schemas

import (
	"strconv"
	"strings"
	"time"
)

// choice is one option of weighted, chosen weight times in sum(weights).
type choice[T any] struct {
	value  T
	weight int
}

// weighted returns one of the choices' values, each as often as its weight.
func weighted[T any](s *Sampler, choices ...choice[T]) T {
	total := 0
	for _, c := range choices {
		total += c.weight
	}
	n := s.rng.IntN(total)
	for _, c := range choices {
		if n < c.weight {
			return c.value
		}
		n -= c.weight
	}
	return choices[len(choices)-1].value
}

// exchange holds the values of a sample HTTP request that several fields share.
type exchange struct {
	method, scheme, host, urlHost, path, query, userAgent, clientIP string
	port, status                                                    int
	requestBody, responseBody                                       int
	compression                                                     string
}

func (x *exchange) url() string {
	raw := x.scheme + "://" + x.urlHost + x.path
	if x.query != "" {
		raw += "?" + x.query
	}
	return raw
}

func (s *Sampler) trafficObject(k *Kind, at time.Time) map[string]any {
	obj := map[string]any{}
	switch k.Name {
	case "http_request_complete.v0":
		s.httpRequest(obj, at)
	case "tcp_connection_closed.v0":
		s.tcpConnection(obj, at)
	}
	value := func(f *Field) any { return s.typeValue(f, at) }
	s.fill(k, obj, value, func(list string, fields []*Field) map[string]any {
		return s.element(list, fields, value)
	})
	return obj
}

// element returns an element of the list of objects with every field set
// through value.
func (s *Sampler) element(list string, fields []*Field, value func(*Field) any) map[string]any {
	elem := map[string]any{}
	for _, f := range fields {
		setPath(elem, strings.TrimPrefix(f.Path, list+"."), value(f))
	}
	return elem
}

func (s *Sampler) newExchange() *exchange {
	x := &exchange{
		method: weighted(s, choice[string]{"get", 65}, choice[string]{"post", 20}, choice[string]{"put", 5},
			choice[string]{"patch", 3}, choice[string]{"delete", 3}, choice[string]{"options", 2}, choice[string]{"head", 2}),
		host: s.pick("api.example.com", "app.example.com", "www.example.org", "shop.example.net", "hooks.example.com"),
		port: weighted(s, choice[int]{443, 85}, choice[int]{80, 10}, choice[int]{8080, 5}),
		path: s.pick("/", "/login", "/graphql", "/healthz", "/api/orders", "/webhooks/github", "/static/js/app."+s.hex(6)+".js",
			"/v1/users/"+strconv.Itoa(1000+s.rng.IntN(9000)), "/v2/products/"+strconv.Itoa(100+s.rng.IntN(900))+"/reviews"),
		query: s.pick("", "", "", "page=2&limit=50", "q=running+shoes&sort=price", "utm_source=newsletter&utm_medium=email", "include=items"),
		userAgent: s.pick(
			"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
			"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
			"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
			"curl/8.5.0",
			"python-requests/2.32.3",
			"Go-http-client/2.0",
		),
		clientIP: s.clientIP(),
		status: weighted(s, choice[int]{200, 70}, choice[int]{201, 4}, choice[int]{204, 3}, choice[int]{301, 2}, choice[int]{304, 5},
			choice[int]{400, 3}, choice[int]{401, 3}, choice[int]{403, 1}, choice[int]{404, 5}, choice[int]{429, 1},
			choice[int]{500, 1}, choice[int]{502, 1}, choice[int]{503, 1}),
		compression: weighted(s, choice[string]{"gzip", 50}, choice[string]{"none", 40}, choice[string]{"deflate", 10}),
	}
	x.scheme, x.urlHost = "https", x.host
	switch x.port {
	case 80:
		x.scheme = "http"
	case 8080:
		x.scheme, x.urlHost = "http", x.host+":8080"
	}
	if x.method == "post" || x.method == "put" || x.method == "patch" {
		x.requestBody = 20 + s.rng.IntN(4000)
	}
	if x.status != 204 && x.status != 304 && x.method != "head" {
		x.responseBody = 50 + s.rng.IntN(20000)
	}
	if x.responseBody == 0 {
		x.compression = "none"
	}
	return x
}

// clientIP returns an address of the documentation ranges, IPv4 three
// times out of four.
func (s *Sampler) clientIP() string {
	if s.percent(25) {
		return "2001:db8:" + strconv.FormatUint(uint64(s.rng.IntN(0x10000)), 16) + "::" + strconv.FormatUint(uint64(1+s.rng.IntN(0xffff)), 16)
	}
	return s.pick("203.0.113.", "198.51.100.") + strconv.Itoa(1+s.rng.IntN(254))
}

// serverIP returns an address of an edge server.
func (s *Sampler) serverIP() string { return "192.0.2." + strconv.Itoa(1+s.rng.IntN(254)) }

// decision returns a module's decision: "invalid" (the module did not run)
// unless it ran, which happens ran percent of the time.
func (s *Sampler) decision(ran int) string {
	if !s.percent(ran) {
		return "invalid"
	}
	return weighted(s, choice[string]{"allow", 95}, choice[string]{"block", 5})
}

func (s *Sampler) httpRequest(obj map[string]any, at time.Time) {
	x := s.newExchange()
	set := func(path string, v any) { setPath(obj, path, v) }
	set("backend.connection_reused", s.percent(80))
	basicAuth := s.decision(10)
	set("basic_auth.decision", basicAuth)
	set("basic_auth.username", nil)
	if basicAuth != "invalid" {
		set("basic_auth.username", s.pick("admin", "ci", "grafana"))
	}
	set("circuit_breaker.decision", weighted(s, choice[string]{"invalid", 60}, choice[string]{"allow", 35},
		choice[string]{"allow_while_open", 3}, choice[string]{"block", 2}))
	set("compression.algorithm", x.compression)
	saved := 0
	if x.compression != "none" {
		saved = x.responseBody * (40 + s.rng.IntN(40)) / 100
	}
	set("compression.bytes_saved", saved)
	set("conn.client_ip", x.clientIP)
	set("conn.server_ip", s.serverIP())
	set("conn.server_name", x.host)
	set("conn.server_port", x.port)
	set("conn.start_ts", stamp(at.Add(-time.Duration(s.rng.IntN(60000))*time.Millisecond)))
	set("http.request.body_length", x.requestBody)
	set("http.request.headers", s.requestHeaders(x))
	set("http.request.method", x.method)
	set("http.request.url.host", x.urlHost)
	set("http.request.url.path", x.path)
	set("http.request.url.query", x.query)
	set("http.request.url.raw", x.url())
	set("http.request.url.scheme", x.scheme)
	set("http.request.user_agent", x.userAgent)
	set("http.response.body_length", x.responseBody)
	set("http.response.headers", s.responseHeaders(x, at))
	set("http.response.status_code", x.status)
	set("ip_policy.decision", s.decision(30))
	s.oauth(obj)
	s.tls(obj, x.scheme == "https")
	set("traffic_policy.logs", s.policyLogs("on_http_request"))
	set("webhook_verification.decision", "invalid")
	if strings.HasPrefix(x.path, "/webhooks/") {
		set("webhook_verification.decision", weighted(s, choice[string]{"allow", 97}, choice[string]{"block", 3}))
	}
}

func (s *Sampler) requestHeaders(x *exchange) map[string]any {
	h := map[string]any{
		"Accept":            []string{"application/json"},
		"Accept-Encoding":   []string{"gzip, deflate, br"},
		"User-Agent":        []string{strings.ToLower(x.userAgent)},
		"X-Forwarded-For":   []string{x.clientIP},
		"X-Forwarded-Proto": []string{x.scheme},
	}
	if strings.HasPrefix(x.userAgent, "Mozilla/") {
		h["Accept"] = []string{"text/html,application/xhtml+xml,*/*;q=0.8"}
		h["Accept-Language"] = []string{s.pick("en-us,en;q=0.9", "de-de,de;q=0.9,en;q=0.8", "ja")}
	}
	if s.percent(30) {
		h["Traceparent"] = []string{"00-" + s.hex(32) + "-" + s.hex(16) + "-01"}
	}
	if x.requestBody > 0 {
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(x.requestBody)}
	}
	return h
}

func (s *Sampler) responseHeaders(x *exchange, at time.Time) map[string]any {
	h := map[string]any{
		"Date":   []string{strings.ToLower(at.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"))},
		"Server": []string{s.pick("nginx/1.27.3", "envoy", "caddy", "uvicorn")},
	}
	if x.responseBody > 0 {
		h["Content-Type"] = []string{s.pick("application/json; charset=utf-8", "text/html; charset=utf-8")}
		h["Content-Length"] = []string{strconv.Itoa(x.responseBody)}
		h["Cache-Control"] = []string{s.pick("no-store", "private, max-age=0", "public, max-age=3600")}
	}
	if x.compression != "none" {
		h["Content-Encoding"] = []string{x.compression}
		h["Vary"] = []string{"accept-encoding"}
	}
	return h
}

func (s *Sampler) oauth(obj map[string]any) {
	set := func(path string, v any) { setPath(obj, path, v) }
	if !s.percent(20) {
		set("oauth.decision", "invalid")
		set("oauth.app_client_id", nil)
		set("oauth.user.id", nil)
		set("oauth.user.name", nil)
		return
	}
	set("oauth.decision", weighted(s, choice[string]{"allow", 95}, choice[string]{"block", 5}))
	set("oauth.app_client_id", s.hex(8)+"-"+s.hex(4)+".apps.example.com")
	set("oauth.user.id", strconv.FormatUint(100000000000+s.rng.Uint64N(900000000000), 10))
	set("oauth.user.name", s.pick("alice@example.com", "bob@example.org", "carol@example.net"))
}

func (s *Sampler) tls(obj map[string]any, on bool) {
	set := func(path string, v any) { setPath(obj, path, v) }
	set("tls.cipher_suite", nil)
	set("tls.version", nil)
	set("tls.client_cert.serial_number", nil)
	set("tls.client_cert.subject.cn", nil)
	if !on {
		return
	}
	if s.percent(85) {
		set("tls.version", "1.3")
		set("tls.cipher_suite", s.pick("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"))
	} else {
		set("tls.version", "1.2")
		set("tls.cipher_suite", s.pick("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"))
	}
	if s.percent(10) {
		set("tls.client_cert.serial_number", s.hex(32))
		set("tls.client_cert.subject.cn", s.pick("device-0042.example.com", "billing-service", "ci-runner"))
	}
}

// policyLogs returns the logs of a traffic policy's Log action.
func (s *Sampler) policyLogs(phase string) []map[string]any {
	return []map[string]any{{
		"action": "log",
		"phase":  phase,
		"metadata": map[string]any{
			"rule":    s.pick("geo", "bots", "allowlist"),
			"country": s.pick("us", "de", "jp", "br"),
		},
	}}
}

func (s *Sampler) tcpConnection(obj map[string]any, at time.Time) {
	set := func(path string, v any) { setPath(obj, path, v) }
	end := at.Add(-time.Duration(s.rng.IntN(500)) * time.Millisecond)
	set("conn.bytes_in", 64+s.rng.IntN(1<<20))
	set("conn.bytes_out", 64+s.rng.IntN(1<<22))
	set("conn.client_ip", s.clientIP())
	set("conn.server_ip", s.serverIP())
	set("conn.server_name", s.pick("1.tcp.example.net", "5.tcp.example.net", "db.example.com"))
	set("conn.server_port", 10000+s.rng.IntN(20000))
	set("conn.start_ts", stamp(end.Add(-time.Duration(1+s.rng.IntN(7200))*time.Second)))
	set("conn.end_ts", stamp(end))
	set("ip_policy.decision", s.decision(30))
	set("traffic_policy.logs", s.policyLogs("on_tcp_connect"))
}
