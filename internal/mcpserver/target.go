package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// target returns the sandbox a call works in: the one named by id, or the
// session's own.
func (s *Server) target(ctx context.Context, req *mcp.CallToolRequest, id string) (*warren.Sandbox, error) {
	if id != "" {
		sb, err := s.client.Connect(ctx, id, 0)
		if err != nil {
			return nil, fmt.Errorf("connecting to sandbox %s: %w", id, err)
		}
		return sb, nil
	}
	if req.Session == nil {
		return nil, errors.New("no MCP session to keep a sandbox for: pass a sandboxId")
	}
	return s.sessions.sandbox(ctx, req.Session)
}

// text is a result with one text item.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
