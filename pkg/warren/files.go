package warren

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/api/gen/filesystem/filesystemconnect"
	"github.com/warren-sandbox/warren/api/wire"
)

// Files reads and writes a sandbox's filesystem (E2B's sandbox.files).
// Relative paths are under the user's home directory.
type Files struct {
	sb   *Sandbox
	http *http.Client
	base string
	rpc  filesystemconnect.FilesystemClient
}

// FileOptions say as whom a file is read or written ("": the sandbox's
// default user, whose file a written one becomes).
type FileOptions struct{ User string }

// EntryInfo describes a file or directory.
type EntryInfo struct {
	Name string
	Path string // absolute
	// Type is "file", "dir" or "symlink"; a symlink reports its target's
	// type and sets SymlinkTarget.
	Type          string
	Size          int64
	Mode          uint32 // permission bits
	Permissions   string // e.g. -rw-r--r--
	Owner, Group  string
	ModifiedTime  time.Time
	SymlinkTarget string
	Metadata      map[string]string
}

// Read returns a file's content.
func (f *Files) Read(ctx context.Context, path string, o FileOptions) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := f.Download(ctx, path, &buf, o); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Download copies a file's content to w and returns how many bytes it
// copied.
func (f *Files) Download(ctx context.Context, path string, w io.Writer, o FileOptions) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.fileURL(path, o.User), nil)
	if err != nil {
		return 0, fmt.Errorf("warren: %w", err)
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("warren: read %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, httpError(resp)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("warren: read %s: %w", path, err)
	}
	return n, nil
}

// Write replaces a file's content with data, making the directories it
// needs.
func (f *Files) Write(ctx context.Context, path string, data []byte, o FileOptions) (*EntryInfo, error) {
	return f.Upload(ctx, path, bytes.NewReader(data), o)
}

// Upload replaces a file's content with what r gives, streamed.
func (f *Files) Upload(ctx context.Context, path string, r io.Reader, o FileOptions) (*EntryInfo, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.fileURL(path, o.User), r)
	if err != nil {
		return nil, fmt.Errorf("warren: %w", err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("warren: write %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, httpError(resp)
	}
	var written []struct{ Path, Name, Type string }
	if err := json.NewDecoder(resp.Body).Decode(&written); err != nil || len(written) == 0 {
		return nil, fmt.Errorf("warren: write %s: unexpected answer (%v)", path, err)
	}
	w := written[0]
	return &EntryInfo{Name: w.Name, Path: w.Path, Type: w.Type}, nil
}

func (f *Files) fileURL(path, user string) string {
	q := url.Values{"path": {path}}
	if user != "" {
		q.Set("username", user)
	}
	return f.base + "/files?" + q.Encode()
}

// URLOptions are a signed file URL's settings.
type URLOptions struct {
	User string
	// Expires makes the URL invalid this long from now (0: never).
	Expires time.Duration
}

// DownloadURL returns a URL that anyone holding it can fetch the file
// from, without the API key or envd's token: it is signed with the token,
// as E2B's SDKs sign it.
func (f *Files) DownloadURL(path string, o URLOptions) string { return f.signedURL(path, "read", o) }

// UploadURL returns a URL that anyone holding it can POST the file's
// content to (multipart or octet-stream), signed like DownloadURL's.
func (f *Files) UploadURL(path string, o URLOptions) string { return f.signedURL(path, "write", o) }

func (f *Files) signedURL(path, op string, o URLOptions) string {
	q := url.Values{"path": {path}}
	if o.User != "" {
		q.Set("username", o.User)
	}
	if tok := f.sb.EnvdAccessToken; tok != "" {
		exp := ""
		if o.Expires > 0 {
			exp = strconv.FormatInt(time.Now().Add(o.Expires).Unix(), 10)
			q.Set("signature_expiration", exp)
		}
		q.Set("signature", wire.SignFileURL(path, op, o.User, tok, exp))
	}
	return f.base + "/files?" + q.Encode()
}
