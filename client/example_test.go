package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
)

// Example sends events of HTTP requests to a Kinesis data stream: it
// creates a destination and a subscription to it, then lists every
// subscription of the account.
func Example() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("SLUICE_API_KEY"))

	description := "all traffic"
	destination, err := c.EventDestinations().Create(ctx, apiwire.DestinationInput{
		Description: &description,
		Target: &apiwire.Target{
			Type: "kinesis", ARNField: "stream_arn", ARN: "arn:aws:kinesis:us-east-1:123456789012:stream/events",
			Auth: apiwire.Auth{Role: &apiwire.Role{RoleARN: "arn:aws:iam::123456789012:role/sluice"}},
		},
	})
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusBadRequest {
		fmt.Println("the API refused the destination:", apiErr.Msg)
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	sources := []apiwire.SourceInput{{Type: "http_request_complete.v0"}}
	destinations := []string{destination.ID}
	if _, err := c.EventSubscriptions().Create(ctx, apiwire.SubscriptionInput{Sources: &sources, DestinationIDs: &destinations}); err != nil {
		fmt.Println(err)
		return
	}
	subscriptions, err := c.EventSubscriptions().ListAll(ctx, client.ListOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range subscriptions.Items {
		fmt.Println(s.ID, len(s.Sources), "sources")
	}
}

// ExampleNewFamily declares a collection of the API that this package has
// no method for, by its path and the field of its pages.
func ExampleNewFamily() {
	type botUser struct {
		ID        string `json:"id"`
		URI       string `json:"uri"`
		Name      string `json:"name"`
		Active    bool   `json:"active"`
		CreatedAt string `json:"created_at"`
	}
	type botUserInput struct {
		Name   *string `json:"name,omitempty"`
		Active *bool   `json:"active,omitempty"`
	}
	c := client.New("http://127.0.0.1:8080", os.Getenv("SLUICE_API_KEY"))
	bots := client.NewFamily[botUser, botUserInput](c, "/bot_users", "bot_users")
	name := "deploy-bot"
	bot, err := bots.Create(context.Background(), botUserInput{Name: &name})
	fmt.Println(bot.ID, err)
}
