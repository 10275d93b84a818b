package filters_test

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/schemas"
)

func ExampleEnv_Compile() {
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		panic(err)
	}

	// When a subscription source is written: compile and check the filter.
	program, err := env.Compile("http_request_complete.v0",
		`inCIDR(ev.conn.client_ip, "203.0.113.0/24") && ev.conn.server_name.endsWith(".example.com")`)
	if err != nil {
		panic(err)
	}
	fmt.Println("fields used:", program.Fields())

	// For each event: set the fields the filter uses, and match.
	fields := program.NewFields()
	for _, ev := range []struct{ clientIP, serverName string }{
		{"203.0.113.7", "api.example.com"},
		{"198.51.100.1", "api.example.com"},
	} {
		fields.Reset()
		_ = fields.SetString("conn.client_ip", ev.clientIP)
		_ = fields.SetString("conn.server_name", ev.serverName)
		ok, err := program.Match(context.Background(), fields)
		fmt.Println(ev.clientIP, ok, err)
	}

	// An invalid filter is an error to show to whoever wrote it.
	_, err = env.Compile("http_request_complete.v0", `ev.conn.server_port`)
	fmt.Println(err)
	// Output:
	// fields used: [conn.client_ip conn.server_name]
	// 203.0.113.7 true <nil>
	// 198.51.100.1 false <nil>
	// invalid filter: ERROR: <input>:1:1: a filter must be a boolean expression, this one is int: compare it, as in ev.conn.server_port == 443
}

func ExampleEnv_CheckFields() {
	env, err := filters.NewEnv(schemas.Default())
	if err != nil {
		panic(err)
	}
	paths := []string{"http.request.method", "conn", "conn.client_ip"}
	fmt.Println(env.CheckFields("http_request_complete.v0", paths), filters.Normalize(paths))
	fmt.Println(env.CheckFields("http_request_complete.v0", []string{"conn.client"}))
	// Output:
	// <nil> [conn http.request.method]
	// invalid field "conn.client" for http_request_complete.v0: no such field or group of fields; under conn are conn.client_ip, conn.server_ip, conn.server_name, conn.server_port, conn.start_ts
}
