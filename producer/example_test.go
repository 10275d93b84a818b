package producer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/producer"
	"github.com/sluicehq/sluice/schemas"
)

// A service publishes an event, then publishes it again, as it would after a
// lost acknowledgement: the event keeps its id, so it is stored once.
func ExampleProducer_Publish() {
	dir, err := os.MkdirTemp("", "sluice-producer-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	srv, err := natsserver.Start(natsserver.Config{DataDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown()
	nc, err := srv.Connect()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()

	// A running sluice creates the stream; here we do it ourselves.
	ctx := context.Background()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := pipeline.EnsureStream(ctx, js, pipeline.StreamConfig{}); err != nil {
		fmt.Println(err)
		return
	}

	p, err := producer.New(nc, producer.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	object, err := json.Marshal(map[string]any{
		"conn": map[string]any{"client_ip": "203.0.113.7"},
		"http": map[string]any{
			"request":  map[string]any{"method": "get", "url": map[string]any{"host": "example.com", "path": "/"}},
			"response": map[string]any{"status_code": 200},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	event := schemas.Event{
		ID:        schemas.NewID(schemas.PrefixEvent), // kept when the event is sent again
		Type:      "http_request_complete.v0",
		AccountID: schemas.NewID(schemas.PrefixAccount),
		Object:    object,
	}

	res := p.Publish(ctx, event)[0]
	fmt.Println("stored:", res.Err == nil, "duplicate:", res.Duplicate)
	res = p.Publish(ctx, event)[0]
	fmt.Println("stored:", res.Err == nil, "duplicate:", res.Duplicate)
	// Output:
	// stored: true duplicate: false
	// stored: true duplicate: true
}
