package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/pkg/warren"
)

type runCodeInput struct {
	Code      string `json:"code" jsonschema:"the code to run; the value of its last expression is returned as a result, and figures (matplotlib) as PNG images"`
	Language  string `json:"language,omitempty" jsonschema:"python (the default), javascript or typescript, or another language the template has a kernel for"`
	Timeout   int    `json:"timeout,omitempty" jsonschema:"seconds after which the run is interrupted (default 300); variables stay"`
	SandboxID string `json:"sandboxId,omitempty" jsonschema:"the sandbox to use (from create_sandbox); omit it to use this session's own sandbox"`
}

type runCodeOutput struct {
	Results []string   `json:"results,omitempty" jsonschema:"the text form of each result: the last expression's value and displayed objects"`
	Stdout  string     `json:"stdout"`
	Stderr  string     `json:"stderr"`
	Error   *codeError `json:"error,omitempty" jsonschema:"the exception the code raised, if any"`
	Images  int        `json:"images" jsonschema:"how many images (PNG or JPEG) the result's content holds"`
}

type codeError struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Traceback string `json:"traceback"`
}

func (s *Server) addCodeTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "run_code",
		Title: "Run code",
		Description: "Run code in a Jupyter-style kernel in the sandbox and return its results, stdout, stderr, " +
			"the error it raised (name, value, traceback) and the images it made (e.g. matplotlib plots, as PNG) " +
			"as image content. Variables, imports and files persist between calls in the same sandbox. " +
			"An exception in the code is reported in the result, not as a tool error.",
	}, s.runCode)
}

func (s *Server) runCode(ctx context.Context, req *mcp.CallToolRequest, in runCodeInput) (*mcp.CallToolResult, runCodeOutput, error) {
	switch {
	case strings.TrimSpace(in.Code) == "":
		return nil, runCodeOutput{}, errors.New("code is empty")
	case in.Timeout < 0 || time.Duration(in.Timeout)*time.Second > maxCommandTimeout:
		return nil, runCodeOutput{}, fmt.Errorf("timeout %d is out of range: give seconds from 1 to %d", in.Timeout, int(maxCommandTimeout/time.Second))
	}
	sb, err := s.target(ctx, req, in.SandboxID)
	if err != nil {
		return nil, runCodeOutput{}, err
	}
	ex, err := sb.RunCode(ctx, in.Code, warren.RunCodeOptions{Language: in.Language, Timeout: time.Duration(in.Timeout) * time.Second})
	if errors.Is(err, warren.ErrTimeout) {
		return nil, runCodeOutput{}, fmt.Errorf("the code did not finish in time and was interrupted: %w", err)
	}
	var apiErr *warren.APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusBadGateway {
		return nil, runCodeOutput{}, fmt.Errorf("running code in sandbox %s: no code interpreter answers there "+
			"(is its template %s or built on it?): %w", sb.ID, DefaultTemplate, err)
	}
	if err != nil {
		return nil, runCodeOutput{}, fmt.Errorf("running code in sandbox %s: %w", sb.ID, err)
	}
	res, out := execution(ex)
	return res, out, nil
}

// execution turns an execution into the tool's content (a text summary,
// then the images) and its structured output.
func execution(ex *warren.Execution) (*mcp.CallToolResult, runCodeOutput) {
	out := runCodeOutput{Stdout: strings.Join(ex.Logs.Stdout, ""), Stderr: strings.Join(ex.Logs.Stderr, "")}
	var images []mcp.Content
	var notes []string
	for i, r := range ex.Results {
		if r.Text != "" {
			out.Results = append(out.Results, r.Text)
		}
		img, mime := r.PNG, "image/png"
		if img == "" {
			img, mime = r.JPEG, "image/jpeg"
		}
		if img == "" {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(img)
		if err != nil {
			notes = append(notes, fmt.Sprintf("result %d: its image is not valid base64: %v", i, err))
			continue
		}
		images = append(images, &mcp.ImageContent{Data: data, MIMEType: mime})
	}
	out.Images = len(images)
	if e := ex.Error; e != nil {
		out.Error = &codeError{Name: e.Name, Value: e.Value, Traceback: ansiEscape.ReplaceAllString(e.Traceback, "")}
	}
	content := append([]mcp.Content{&mcp.TextContent{Text: summary(out, notes)}}, images...)
	return &mcp.CallToolResult{Content: content}, out
}

// ansiEscape matches the terminal colour codes IPython puts in
// tracebacks, which only get in a model's way.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// summary is the execution as text for a model to read.
func summary(out runCodeOutput, notes []string) string {
	var b strings.Builder
	section := func(name, body string) {
		if body == "" {
			return
		}
		fmt.Fprintf(&b, "[%s]\n%s", name, body)
		if !strings.HasSuffix(body, "\n") {
			b.WriteByte('\n')
		}
	}
	for _, r := range out.Results {
		section("result", r)
	}
	section("stdout", out.Stdout)
	section("stderr", out.Stderr)
	if e := out.Error; e != nil {
		section("error", fmt.Sprintf("%s: %s\n%s", e.Name, e.Value, e.Traceback))
	}
	if out.Images > 0 {
		section("images", fmt.Sprintf("%d image(s) follow", out.Images))
	}
	for _, n := range notes {
		section("note", n)
	}
	if b.Len() == 0 {
		return "(no output)"
	}
	return strings.TrimRight(b.String(), "\n")
}
