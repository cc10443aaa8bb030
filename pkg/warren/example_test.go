package warren_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
	_ "github.com/warren-sandbox/warren/pkg/warren/dockerfile" // for BuildDockerfile
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
func ExampleClient_GetInfo() {
	ctx := context.Background()
	client, err := warren.New(warren.Config{})
	if err != nil {
		log.Fatal(err)
	}
	info, err := client.GetInfo(ctx, "i0example")
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

// Python in a code-interpreter sandbox: the value of the last expression,
// printed output as it streams, an exception, and a plot saved as PNG.
func ExampleSandbox_RunCode() {
	ctx := context.Background()
	client, err := warren.New(warren.Config{})
	if err != nil {
		log.Fatal(err)
	}
	sb, err := client.Create(ctx, "code-interpreter-v1", warren.CreateOptions{Timeout: 10 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Kill(ctx)

	ex, err := sb.RunCode(ctx, "x = 21\nprint('computing')\nx * 2", warren.RunCodeOptions{
		OnStdout: func(m warren.OutputMessage) { fmt.Print("stdout: ", m.Line) },
	})
	if err != nil {
		log.Fatal(err) // the run could not be done, e.g. the sandbox is gone
	}
	fmt.Println("result:", ex.Text()) // 42

	ex, err = sb.RunCode(ctx, "1/0", warren.RunCodeOptions{})
	if err == nil && ex.Error != nil {
		fmt.Println("the code raised", ex.Error.Name) // ZeroDivisionError
	}

	ex, err = sb.RunCode(ctx, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()", warren.RunCodeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range ex.Results {
		if r.PNG == "" {
			continue
		}
		png, _ := base64.StdEncoding.DecodeString(r.PNG)
		_ = os.WriteFile("plot.png", png, 0o644)
		if r.Chart != nil && len(r.Chart.Elements) > 0 {
			fmt.Println("a", r.Chart.Type, "chart of", len(r.Chart.Elements[0].Points), "points")
		}
	}
}

// A context of its own keeps state apart from the default one.
func ExampleSandbox_CreateCodeContext() {
	ctx := context.Background()
	client, err := warren.New(warren.Config{})
	if err != nil {
		log.Fatal(err)
	}
	sb, err := client.Connect(ctx, "i0example", 0)
	if err != nil {
		log.Fatal(err)
	}
	cc, err := sb.CreateCodeContext(ctx, warren.CodeContextOptions{Cwd: "/tmp"})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.RemoveCodeContext(ctx, cc.ID)
	if _, err := sb.RunCode(ctx, "import os; here = os.getcwd()", warren.RunCodeOptions{Context: cc}); err != nil {
		log.Fatal(err)
	}
	ex, err := sb.RunCode(ctx, "here", warren.RunCodeOptions{Context: cc})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ex.Text()) // /tmp
}

// A template from a Dockerfile and the directory its COPY steps read, with
// the build's log on stdout; sandboxes then start from "my-app:v1".
func ExampleClient_BuildDockerfile() {
	ctx := context.Background()
	client, err := warren.New(warren.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ref, err := client.BuildDockerfile(ctx, warren.DockerfileBuild{
		Name:      "my-app",
		Tags:      []string{"v1"},
		Dir:       "./app", // holds the Dockerfile and what it copies
		BuildArgs: map[string]string{"PYTHON_VERSION": "3.12"},
		OnLog:     func(e warren.BuildLogEntry) { fmt.Println(e.Level, e.Message) },
	})
	var failed *warren.BuildError
	switch {
	case errors.As(err, &failed):
		log.Fatalf("the build failed (Dockerfile line %d): %s", failed.Line, failed.Message)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println("built", ref.TemplateID, "build", ref.BuildID)
	sb, err := client.Create(ctx, "my-app:v1", warren.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Kill(ctx)
}
