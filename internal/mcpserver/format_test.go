package mcpserver

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestExecution: images in order (PNG, JPEG), a bad image noted instead,
// the exception in the text and the output.
func TestExecution(t *testing.T) {
	jpeg := []byte{0xff, 0xd8, 0xff, 0xe0}
	res, out := execution(&warren.Execution{
		Results: []warren.Result{
			{PNG: base64.StdEncoding.EncodeToString(fakePNG)},
			{Text: "<Figure>", JPEG: base64.StdEncoding.EncodeToString(jpeg)},
			{PNG: "not base64!"},
		},
		Logs:  warren.Logs{Stdout: []string{"a\n", "b"}, Stderr: []string{"warn\n"}},
		Error: &warren.ExecutionError{Name: "E", Value: "v", Traceback: "\x1b[0;31mtb\x1b[0m"},
	})
	if out.Images != 2 || out.Stdout != "a\nb" || out.Error == nil || out.Error.Traceback != "tb" {
		t.Errorf("output %+v", out)
	}
	if len(res.Content) != 3 {
		t.Fatalf("%d items, want text and two images", len(res.Content))
	}
	if img := res.Content[2].(*mcp.ImageContent); img.MIMEType != "image/jpeg" || !bytes.Equal(img.Data, jpeg) {
		t.Errorf("third item %+v", img)
	}
	txt := res.Content[0].(*mcp.TextContent).Text
	for _, want := range []string{"[result]\n<Figure>", "[stdout]\na\nb\n[stderr]\nwarn", "[error]\nE: v\ntb", "2 image(s) follow", "result 2: its image is not valid base64"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text %q lacks %q", txt, want)
		}
	}
	if res, _ := execution(&warren.Execution{}); res.Content[0].(*mcp.TextContent).Text != "(no output)" {
		t.Errorf("an empty execution: %q", res.Content[0].(*mcp.TextContent).Text)
	}
}

func TestCommandSummary(t *testing.T) {
	for _, tc := range []struct {
		out  runCommandOutput
		want string
	}{
		{runCommandOutput{Stdout: "hi\n"}, "exit code: 0\n[stdout]\nhi"},
		{runCommandOutput{ExitCode: 2, Stderr: "no\n", Error: "exit status 2"}, "exit code: 2\n[stderr]\nno"},
		{runCommandOutput{ExitCode: -1, Error: "signal: killed"}, "exit code: -1 (signal: killed)"},
	} {
		if got := commandSummary(tc.out); got != tc.want {
			t.Errorf("commandSummary(%+v) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

func TestCommandOptions(t *testing.T) {
	o, err := commandOptions(runCommandInput{Command: "ls", Cwd: "/tmp", Envs: map[string]string{"A": "1"}, Timeout: 5, User: "root"})
	if err != nil || o.Cwd != "/tmp" || o.Envs["A"] != "1" || o.Timeout.Seconds() != 5 || o.User != "root" {
		t.Errorf("commandOptions = %+v, %v", o, err)
	}
	if o, _ := commandOptions(runCommandInput{Command: "ls"}); o.Timeout != warren.DefaultCommandTimeout {
		t.Errorf("default timeout %v", o.Timeout)
	}
}

// TestFileContent: text as text, images as images, other bytes as base64.
func TestFileContent(t *testing.T) {
	if got := fileContent([]byte("héllo")).Content[0].(*mcp.TextContent).Text; got != "héllo" {
		t.Errorf("text file: %q", got)
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 16)...)
	if img, ok := fileContent(png).Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" {
		t.Errorf("PNG file: %#v", fileContent(png).Content[0])
	}
	bin := []byte{0, 0xff, 0xfe, 1}
	if got := fileContent(bin).Content[0].(*mcp.TextContent).Text; !strings.HasSuffix(got, base64.StdEncoding.EncodeToString(bin)) || !strings.Contains(got, "binary file, 4 bytes") {
		t.Errorf("binary file: %q", got)
	}
}

func TestDecodeContent(t *testing.T) {
	if b, err := decodeContent("aGk=", "base64"); err != nil || string(b) != "hi" {
		t.Errorf("base64: %q %v", b, err)
	}
	if b, err := decodeContent("aGk=", ""); err != nil || string(b) != "aGk=" {
		t.Errorf("utf-8: %q %v", b, err)
	}
}

func TestCappedBuffer(t *testing.T) {
	b := &cappedBuffer{limit: 4}
	if _, err := b.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write([]byte("de")); !errors.Is(err, errTooLarge) {
		t.Errorf("write past the limit: %v", err)
	}
	if b.buf.String() != "abc" {
		t.Errorf("kept %q", b.buf.String())
	}
}
