package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// maxReadSize bounds what read_file returns, so that one call cannot
// flood the model's context.
const maxReadSize = 4 << 20

type readFileInput struct {
	Path      string `json:"path" jsonschema:"the file's path; relative paths start at the user's home, /home/user"`
	SandboxID string `json:"sandboxId,omitempty" jsonschema:"the sandbox to use (from create_sandbox); omit it to use this session's own sandbox"`
}

type writeFileInput struct {
	Path      string `json:"path" jsonschema:"the file's path; missing parent directories are created; an existing file is replaced"`
	Content   string `json:"content" jsonschema:"what to write"`
	Encoding  string `json:"encoding,omitempty" jsonschema:"utf-8 (the default): content is the text; base64: content is base64-encoded bytes"`
	SandboxID string `json:"sandboxId,omitempty" jsonschema:"the sandbox to use (from create_sandbox); omit it to use this session's own sandbox"`
}

type writeFileOutput struct {
	Path string `json:"path" jsonschema:"the file's absolute path"`
	Size int64  `json:"size" jsonschema:"bytes written"`
}

type listFilesInput struct {
	Path      string `json:"path" jsonschema:"the directory to list; relative paths start at the user's home, /home/user"`
	Depth     int    `json:"depth,omitempty" jsonschema:"how many levels to descend (default 1: the directory's own entries)"`
	SandboxID string `json:"sandboxId,omitempty" jsonschema:"the sandbox to use (from create_sandbox); omit it to use this session's own sandbox"`
}

type listFilesOutput struct {
	Entries []fileEntry `json:"entries"`
}

type fileEntry struct {
	Name          string    `json:"name"`
	Path          string    `json:"path"`
	Type          string    `json:"type" jsonschema:"file, dir or symlink"`
	Size          int64     `json:"size"`
	Permissions   string    `json:"permissions,omitempty" jsonschema:"as ls -l shows them, e.g. -rw-r--r--"`
	ModifiedTime  time.Time `json:"modifiedTime,omitzero"`
	SymlinkTarget string    `json:"symlinkTarget,omitempty"`
}

func (s *Server) addFileTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "read_file",
		Title: "Read a file",
		Description: "Read a file in the sandbox. Text (UTF-8) comes back as text, PNG, JPEG, GIF and WebP " +
			"files as image content, other binary files as base64. Files over 4 MiB are refused: use run_command " +
			"(head, tail, grep) for those.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.readFile)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "write_file",
		Title:       "Write a file",
		Description: "Write a file in the sandbox, creating missing parent directories and replacing an existing file.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true},
	}, s.writeFile)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "list_files",
		Title:       "List a directory",
		Description: "List a directory in the sandbox: each entry's name, path, type (file, dir or symlink), size, permissions and modification time.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.listFiles)
}

func (s *Server) readFile(ctx context.Context, req *mcp.CallToolRequest, in readFileInput) (*mcp.CallToolResult, any, error) {
	if in.Path == "" {
		return nil, nil, errors.New("path is empty")
	}
	sb, err := s.target(ctx, req, in.SandboxID)
	if err != nil {
		return nil, nil, err
	}
	w := &cappedBuffer{limit: maxReadSize}
	_, err = sb.Files.Download(ctx, in.Path, w, warren.FileOptions{})
	if errors.Is(err, errTooLarge) {
		return nil, nil, fmt.Errorf("%s is larger than the %d bytes read_file returns: use run_command (head, tail, grep)", in.Path, maxReadSize)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", in.Path, err)
	}
	return fileContent(w.buf.Bytes()), nil, nil
}

// errTooLarge stops a download that outgrows its cappedBuffer.
var errTooLarge = errors.New("file too large")

// cappedBuffer keeps what is written to it up to limit bytes, and fails
// the write that would pass it.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.limit {
		return 0, errTooLarge
	}
	return b.buf.Write(p)
}

// fileContent is a file as content: text, an image, or base64.
func fileContent(data []byte) *mcp.CallToolResult {
	if mime := http.DetectContentType(data); strings.HasPrefix(mime, "image/") && mime != "image/svg+xml" {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: data, MIMEType: mime}}}
	}
	if utf8.Valid(data) {
		return text(string(data))
	}
	return text(fmt.Sprintf("(binary file, %d bytes, base64-encoded)\n%s", len(data), base64.StdEncoding.EncodeToString(data)))
}

func (s *Server) writeFile(ctx context.Context, req *mcp.CallToolRequest, in writeFileInput) (*mcp.CallToolResult, writeFileOutput, error) {
	if in.Path == "" {
		return nil, writeFileOutput{}, errors.New("path is empty")
	}
	data, err := decodeContent(in.Content, in.Encoding)
	if err != nil {
		return nil, writeFileOutput{}, err
	}
	sb, err := s.target(ctx, req, in.SandboxID)
	if err != nil {
		return nil, writeFileOutput{}, err
	}
	info, err := sb.Files.Write(ctx, in.Path, data, warren.FileOptions{})
	if err != nil {
		return nil, writeFileOutput{}, fmt.Errorf("writing %s: %w", in.Path, err)
	}
	out := writeFileOutput{Path: in.Path, Size: int64(len(data))}
	if info != nil && info.Path != "" {
		out.Path = info.Path
	}
	return text(fmt.Sprintf("wrote %d bytes to %s", out.Size, out.Path)), out, nil
}

// decodeContent turns write_file's content into bytes.
func decodeContent(content, encoding string) ([]byte, error) {
	switch strings.ToLower(encoding) {
	case "", "utf-8", "utf8", "text":
		return []byte(content), nil
	case "base64":
		data, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			return nil, fmt.Errorf("content is not valid base64: %w", err)
		}
		return data, nil
	}
	return nil, fmt.Errorf("encoding %q is not one of utf-8, base64", encoding)
}

func (s *Server) listFiles(ctx context.Context, req *mcp.CallToolRequest, in listFilesInput) (*mcp.CallToolResult, listFilesOutput, error) {
	if in.Path == "" {
		return nil, listFilesOutput{}, errors.New("path is empty")
	}
	if in.Depth < 0 {
		return nil, listFilesOutput{}, fmt.Errorf("depth %d is negative", in.Depth)
	}
	depth := max(in.Depth, 1)
	sb, err := s.target(ctx, req, in.SandboxID)
	if err != nil {
		return nil, listFilesOutput{}, err
	}
	list, err := sb.Files.List(ctx, in.Path, warren.ListFilesOptions{Depth: depth})
	if err != nil {
		return nil, listFilesOutput{}, fmt.Errorf("listing %s: %w", in.Path, err)
	}
	out := listFilesOutput{Entries: make([]fileEntry, 0, len(list))}
	var b strings.Builder
	for _, e := range list {
		out.Entries = append(out.Entries, fileEntry{Name: e.Name, Path: e.Path, Type: e.Type, Size: e.Size,
			Permissions: e.Permissions, ModifiedTime: e.ModifiedTime, SymlinkTarget: e.SymlinkTarget})
		fmt.Fprintf(&b, "%-7s %10d  %s", e.Type, e.Size, e.Path)
		if e.SymlinkTarget != "" {
			fmt.Fprintf(&b, " -> %s", e.SymlinkTarget)
		}
		b.WriteByte('\n')
	}
	if len(list) == 0 {
		return text(in.Path + " is empty"), out, nil
	}
	return text(strings.TrimRight(b.String(), "\n")), out, nil
}
