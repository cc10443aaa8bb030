package warren_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// A sandbox from the base template, found through E2B_API_URL and
// E2B_API_KEY, killed at the end.
func Example() {
	ctx := context.Background()
	client, err := warren.New(warren.Config{})
	if err != nil {
		log.Fatal(err)
	}
	sb, err := client.Create(ctx, "base", warren.CreateOptions{Timeout: 5 * time.Minute, Metadata: map[string]string{"user": "ada"}})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Kill(ctx)
	fmt.Println("sandbox", sb.ID, "answers at", sb.Host(8080))
}

// Errors are classified with errors.Is.
func ExampleClient_Info() {
	ctx := context.Background()
	client, err := warren.New(warren.Config{})
	if err != nil {
		log.Fatal(err)
	}
	info, err := client.Info(ctx, "i0example")
	switch {
	case errors.Is(err, warren.ErrNotFound):
		fmt.Println("no such sandbox")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println(info.State, "until", info.EndAt)
	}
}

// Every sandbox with some metadata, a page at a time.
func ExampleClient_List() {
	ctx := context.Background()
	client, err := warren.New(warren.Config{})
	if err != nil {
		log.Fatal(err)
	}
	opts := warren.ListOptions{Metadata: map[string]string{"user": "ada"}, Limit: 50}
	for {
		page, next, err := client.List(ctx, opts)
		if err != nil {
			log.Fatal(err)
		}
		for _, s := range page {
			fmt.Println(s.ID, s.State)
		}
		if next == "" {
			break
		}
		opts.NextToken = next
	}
}
