package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// maxSandboxTimeout bounds create_sandbox's timeout argument (E2B's limit
// for long-running sandboxes).
const maxSandboxTimeout = 24 * time.Hour

type createSandboxInput struct {
	Template string            `json:"template,omitempty" jsonschema:"the template (id or name) to start from; default: the one this server's session sandboxes use"`
	Timeout  int               `json:"timeout,omitempty" jsonschema:"seconds the sandbox lives before it is killed (default: the server's, 300 on warren)"`
	Metadata map[string]string `json:"metadata,omitempty" jsonschema:"key-value pairs stored with the sandbox, for listing and filtering"`
}

type createSandboxOutput struct {
	SandboxID  string `json:"sandboxId" jsonschema:"pass it as sandboxId to the other tools"`
	TemplateID string `json:"templateId"`
}

type killSandboxInput struct {
	SandboxID string `json:"sandboxId" jsonschema:"the sandbox to kill"`
}

type killSandboxOutput struct {
	Killed bool `json:"killed"`
}

func (s *Server) addSandboxTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "create_sandbox",
		Title: "Create a sandbox",
		Description: "Create a new sandbox and return its id, to pass as sandboxId to the other tools. It lives until " +
			"its timeout or kill_sandbox, not only as long as this session. Most tasks need none: the other tools " +
			"use this session's own sandbox when sandboxId is omitted.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false)},
	}, s.createSandbox)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "kill_sandbox",
		Title:       "Kill a sandbox",
		Description: "Kill a sandbox and delete everything in it. Killing this session's own sandbox makes the next call without sandboxId create a new one.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true},
	}, s.killSandbox)
}

func (s *Server) createSandbox(ctx context.Context, _ *mcp.CallToolRequest, in createSandboxInput) (*mcp.CallToolResult, createSandboxOutput, error) {
	timeout := time.Duration(in.Timeout) * time.Second
	if in.Timeout < 0 || timeout > maxSandboxTimeout {
		return nil, createSandboxOutput{}, fmt.Errorf("timeout %d is out of range: give seconds from 1 to %d", in.Timeout, int(maxSandboxTimeout/time.Second))
	}
	template := in.Template
	if template == "" {
		template = s.template
	}
	sb, err := s.client.Create(ctx, template, warren.CreateOptions{Timeout: timeout, Metadata: in.Metadata})
	if err != nil {
		return nil, createSandboxOutput{}, fmt.Errorf("creating a sandbox from template %q: %w", template, err)
	}
	s.log.Info("created a sandbox", "sandbox", sb.ID, "template", template)
	out := createSandboxOutput{SandboxID: sb.ID, TemplateID: sb.TemplateID}
	return text(fmt.Sprintf("created sandbox %s from template %s", sb.ID, template)), out, nil
}

func (s *Server) killSandbox(ctx context.Context, req *mcp.CallToolRequest, in killSandboxInput) (*mcp.CallToolResult, killSandboxOutput, error) {
	if in.SandboxID == "" {
		return nil, killSandboxOutput{}, errors.New("sandboxId is empty")
	}
	err := s.client.Kill(ctx, in.SandboxID)
	if errors.Is(err, warren.ErrNotFound) {
		return nil, killSandboxOutput{}, fmt.Errorf("sandbox %s does not exist (already killed, or timed out): %w", in.SandboxID, err)
	}
	if err != nil {
		return nil, killSandboxOutput{}, fmt.Errorf("killing sandbox %s: %w", in.SandboxID, err)
	}
	if req.Session != nil {
		s.sessions.forget(req.Session, in.SandboxID)
	}
	s.log.Info("killed a sandbox", "sandbox", in.SandboxID)
	return text("killed sandbox " + in.SandboxID), killSandboxOutput{Killed: true}, nil
}
