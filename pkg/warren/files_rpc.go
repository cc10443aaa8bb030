package warren

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	fs "github.com/warren-sandbox/warren/api/gen/filesystem"
)

// ListFilesOptions say how deep a List walks (0: 1, the directory's own
// entries) and as whom.
type ListFilesOptions struct {
	Depth int
	User  string
}

// List returns the entries under a directory, depth levels down, in one
// flat list. Broken symlinks are left out, as E2B's SDKs leave them.
func (f *Files) List(ctx context.Context, path string, o ListFilesOptions) ([]EntryInfo, error) {
	if o.Depth < 0 {
		return nil, &APIError{Status: 400, Message: "depth must be at least 1"}
	}
	req := connect.NewRequest(&fs.ListDirRequest{Path: path, Depth: uint32(max(o.Depth, 1))})
	setUser(req.Header(), o.User)
	resp, err := f.rpc.ListDir(ctx, req)
	if err != nil {
		return nil, rpcError(err)
	}
	var out []EntryInfo
	for _, e := range resp.Msg.GetEntries() {
		if e.GetType() != fs.FileType_FILE_TYPE_UNSPECIFIED {
			out = append(out, entry(e))
		}
	}
	return out, nil
}

// Stat describes one file or directory; ErrNotFound when there is none.
func (f *Files) Stat(ctx context.Context, path string, o FileOptions) (*EntryInfo, error) {
	req := connect.NewRequest(&fs.StatRequest{Path: path})
	setUser(req.Header(), o.User)
	resp, err := f.rpc.Stat(ctx, req)
	if err != nil {
		return nil, rpcError(err)
	}
	e := entry(resp.Msg.GetEntry())
	return &e, nil
}

// Exists says whether path exists.
func (f *Files) Exists(ctx context.Context, path string, o FileOptions) (bool, error) {
	_, err := f.Stat(ctx, path, o)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// MakeDir makes a directory and its parents; false when it already
// existed.
func (f *Files) MakeDir(ctx context.Context, path string, o FileOptions) (bool, error) {
	req := connect.NewRequest(&fs.MakeDirRequest{Path: path})
	setUser(req.Header(), o.User)
	_, err := f.rpc.MakeDir(ctx, req)
	if connect.CodeOf(err) == connect.CodeAlreadyExists {
		return false, nil
	}
	if err != nil {
		return false, rpcError(err)
	}
	return true, nil
}

// Rename moves a file or directory.
func (f *Files) Rename(ctx context.Context, from, to string, o FileOptions) (*EntryInfo, error) {
	req := connect.NewRequest(&fs.MoveRequest{Source: from, Destination: to})
	setUser(req.Header(), o.User)
	resp, err := f.rpc.Move(ctx, req)
	if err != nil {
		return nil, rpcError(err)
	}
	e := entry(resp.Msg.GetEntry())
	return &e, nil
}

// Remove removes a file or a directory with all it holds; a missing path
// is not an error.
func (f *Files) Remove(ctx context.Context, path string, o FileOptions) error {
	req := connect.NewRequest(&fs.RemoveRequest{Path: path})
	setUser(req.Header(), o.User)
	if _, err := f.rpc.Remove(ctx, req); err != nil {
		return rpcError(err)
	}
	return nil
}

var fileTypes = map[fs.FileType]string{
	fs.FileType_FILE_TYPE_FILE:      "file",
	fs.FileType_FILE_TYPE_DIRECTORY: "dir",
	fs.FileType_FILE_TYPE_SYMLINK:   "symlink",
}

func entry(e *fs.EntryInfo) EntryInfo {
	out := EntryInfo{Name: e.GetName(), Path: e.GetPath(), Type: fileTypes[e.GetType()], Size: e.GetSize(),
		Mode: e.GetMode(), Permissions: e.GetPermissions(), Owner: e.GetOwner(), Group: e.GetGroup(),
		SymlinkTarget: e.GetSymlinkTarget(), Metadata: e.GetMetadata()}
	if t := e.GetModifiedTime(); t != nil {
		out.ModifiedTime = t.AsTime()
	}
	return out
}
