package warren_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// A command's output and status; a non-zero exit is a *CommandExitError
// that still carries the output.
func ExampleCommands_Run() {
	ctx := context.Background()
	client, _ := warren.New(warren.Config{})
	sb, err := client.Create(ctx, "base", warren.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Kill(ctx)
	res, err := sb.Commands.Run(ctx, "ls /nope", warren.CommandOptions{User: "root"})
	var exit *warren.CommandExitError
	if errors.As(err, &exit) {
		fmt.Println("exit", exit.Result.ExitCode, exit.Result.Stderr)
	} else if err != nil {
		log.Fatal(err)
	} else {
		fmt.Print(res.Stdout)
	}
}

// A server in the background, its output streamed, stopped at the end.
func ExampleCommands_Start() {
	ctx := context.Background()
	client, _ := warren.New(warren.Config{})
	sb, err := client.Create(ctx, "base", warren.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Kill(ctx)
	h, err := sb.Commands.Start(ctx, "python3 -m http.server 8080", warren.CommandOptions{
		Timeout:  warren.NoTimeout,
		OnStderr: func(b []byte) { os.Stderr.Write(b) },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("serving at", sb.Host(8080), "as pid", h.PID)
	if _, err := h.Kill(ctx); err != nil {
		log.Fatal(err)
	}
}

// Files in and out, a listing, and a link to share a file without the
// API key.
func ExampleFiles() {
	ctx := context.Background()
	client, _ := warren.New(warren.Config{})
	sb, err := client.Create(ctx, "base", warren.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Kill(ctx)
	if _, err := sb.Files.Write(ctx, "data/in.csv", []byte("a,b\n1,2\n"), warren.FileOptions{}); err != nil {
		log.Fatal(err)
	}
	entries, err := sb.Files.List(ctx, "data", warren.ListFilesOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		fmt.Println(e.Type, e.Path, e.Size)
	}
	fmt.Println(sb.Files.DownloadURL("data/in.csv", warren.URLOptions{Expires: time.Hour}))
}

// An interactive terminal: type into it, read what it shows.
func ExamplePty_Create() {
	ctx := context.Background()
	client, _ := warren.New(warren.Config{})
	sb, err := client.Create(ctx, "base", warren.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Kill(ctx)
	term, err := sb.Pty.Create(ctx, warren.PtyOptions{Cols: 120, Rows: 40, OnData: func(b []byte) { os.Stdout.Write(b) }})
	if err != nil {
		log.Fatal(err)
	}
	_ = sb.Pty.SendInput(ctx, term.PID, []byte("top -b -n 1 | head; exit\n"))
	_, _ = term.Wait()
}

// A template described in code rather than a Dockerfile, built with its
// log on stdout.
func ExampleClient_BuildTemplate() {
	ctx := context.Background()
	client, _ := warren.New(warren.Config{})
	tpl := warren.NewTemplate().FromTemplate("base").
		PipInstall("pandas", "matplotlib").
		Copy("notebooks/", "/home/user/notebooks/").
		SetWorkdir("/home/user/notebooks")
	_, err := client.BuildTemplate(ctx, "analysis:v1", tpl, warren.TemplateBuildOptions{
		Dir:   ".",
		OnLog: func(e warren.BuildLogEntry) { fmt.Println(e.Message) },
	})
	if err != nil {
		log.Fatal(err)
	}
}
