package natsserver_test

import (
	"context"
	"fmt"
	"os"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natsserver"
)

// A server without a TCP listener, used by a client of the same process.
func ExampleStart() {
	dir, err := os.MkdirTemp("", "sluice-example")
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
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EXAMPLE", Subjects: []string{"example.>"}}); err != nil {
		fmt.Println(err)
		return
	}
	ack, err := js.Publish(ctx, "example.hello", []byte("hello"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("stored in %s as message %d; listening: %t\n", ack.Stream, ack.Sequence, srv.ClientURL() != "")
	// Output: stored in EXAMPLE as message 1; listening: false
}
