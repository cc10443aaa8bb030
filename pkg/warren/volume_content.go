package warren

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// The types of a VolumeEntry.
const (
	VolumeFile      = "file"
	VolumeDirectory = "directory"
	VolumeSymlink   = "symlink"
	VolumeUnknown   = "unknown"
)

// VolumeEntry is a file, directory or symlink of a volume.
type VolumeEntry struct {
	Name string
	Type string // VolumeFile, VolumeDirectory, VolumeSymlink or VolumeUnknown
	// Path is from the volume's root and starts with "/".
	Path                string
	Size                int64
	Mode                uint32 // permission bits
	UID, GID            uint32
	ATime, MTime, CTime time.Time
	Target              string // a symlink's target
}

// VolumeMetadata are an entry's owner and mode; nil fields are left as
// they are (at a write or a mkdir: root, 0644 for a file, 0755 for a
// directory).
type VolumeMetadata struct {
	UID, GID, Mode *uint32
}

// VolumeWriteOptions are WriteFile's and MakeDir's settings.
type VolumeWriteOptions struct {
	VolumeMetadata
	// Force: WriteFile replaces an existing file, MakeDir makes the
	// missing parents and takes an existing directory as done. Without
	// it either is ErrConflict.
	Force bool
}

// List returns what is below the directory path, depth levels down (0 or
// 1: its children). A missing path is ErrNotFound.
func (v *Volume) List(ctx context.Context, path string, depth int) ([]VolumeEntry, error) {
	p := rest.ListVolumeDirParams{Path: path}
	if depth > 0 {
		p.Depth = &depth
	}
	bearer, err := v.bearer(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := v.client.vapi.ListVolumeDirWithResponse(ctx, v.ID, &p, bearer)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	out := make([]VolumeEntry, 0, len(*resp.JSON200))
	for _, e := range *resp.JSON200 {
		out = append(out, volumeEntry(&e))
	}
	return out, nil
}

// MakeDir makes the directory path (with Force, its parents too).
func (v *Volume) MakeDir(ctx context.Context, path string, o VolumeWriteOptions) (VolumeEntry, error) {
	p := rest.MakeVolumeDirParams{Path: path, UID: o.UID, GID: o.GID, Mode: o.Mode}
	if o.Force {
		p.Force = &o.Force
	}
	bearer, err := v.bearer(ctx)
	if err != nil {
		return VolumeEntry{}, err
	}
	resp, err := v.client.vapi.MakeVolumeDirWithResponse(ctx, v.ID, &p, bearer)
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return VolumeEntry{}, err
	}
	return volumeEntry(resp.JSON201), nil
}

// Stat returns the entry at path; a missing path is ErrNotFound.
func (v *Volume) Stat(ctx context.Context, path string) (VolumeEntry, error) {
	bearer, err := v.bearer(ctx)
	if err != nil {
		return VolumeEntry{}, err
	}
	resp, err := v.client.vapi.StatVolumePathWithResponse(ctx, v.ID, &rest.StatVolumePathParams{Path: path}, bearer)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return VolumeEntry{}, err
	}
	return volumeEntry(resp.JSON200), nil
}

// Exists reports whether path exists; errors other than a missing path
// are returned.
func (v *Volume) Exists(ctx context.Context, path string) (bool, error) {
	_, err := v.Stat(ctx, path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return false, err
}

// UpdateMetadata changes an entry's owner or mode and returns it changed.
func (v *Volume) UpdateMetadata(ctx context.Context, path string, m VolumeMetadata) (VolumeEntry, error) {
	bearer, err := v.bearer(ctx)
	if err != nil {
		return VolumeEntry{}, err
	}
	body := rest.VolumeMetadata{UID: m.UID, GID: m.GID, Mode: m.Mode}
	resp, err := v.client.vapi.UpdateVolumePathWithResponse(ctx, v.ID, &rest.UpdateVolumePathParams{Path: path}, body, bearer)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return VolumeEntry{}, err
	}
	return volumeEntry(resp.JSON200), nil
}

// Remove removes a file, a symlink or a directory with everything in it.
func (v *Volume) Remove(ctx context.Context, path string) error {
	bearer, err := v.bearer(ctx)
	if err != nil {
		return err
	}
	resp, err := v.client.vapi.RemoveVolumePathWithResponse(ctx, v.ID, &rest.RemoveVolumePathParams{Path: path}, bearer)
	return answer(resp, err, http.StatusNoContent)
}

// OpenFile streams a regular file's content; the caller closes it.
func (v *Volume) OpenFile(ctx context.Context, path string) (io.ReadCloser, error) {
	bearer, err := v.bearer(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := v.client.vapi.ReadVolumeFile(ctx, v.ID, &rest.ReadVolumeFileParams{Path: path}, bearer)
	if err != nil {
		return nil, fmt.Errorf("warren: read %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, httpError(resp)
	}
	return resp.Body, nil
}

// ReadFile returns a regular file's whole content.
func (v *Volume) ReadFile(ctx context.Context, path string) ([]byte, error) {
	r, err := v.OpenFile(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("warren: read %s: %w", path, err)
	}
	return data, nil
}

// WriteFile writes a file from r, streamed; an existing file is replaced
// only with Force (ErrConflict without). Its parent must exist. A full
// volume is ErrNoSpace.
func (v *Volume) WriteFile(ctx context.Context, path string, r io.Reader, o VolumeWriteOptions) (VolumeEntry, error) {
	p := rest.WriteVolumeFileParams{Path: path, UID: o.UID, GID: o.GID, Mode: o.Mode}
	if o.Force {
		p.Force = &o.Force
	}
	bearer, err := v.bearer(ctx)
	if err != nil {
		return VolumeEntry{}, err
	}
	if r == nil {
		r = http.NoBody
	}
	resp, err := v.client.vapi.WriteVolumeFileWithBodyWithResponse(ctx, v.ID, &p, "application/octet-stream", r, bearer)
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return VolumeEntry{}, err
	}
	return volumeEntry(resp.JSON201), nil
}

// WriteFileBytes is WriteFile of data.
func (v *Volume) WriteFileBytes(ctx context.Context, path string, data []byte, o VolumeWriteOptions) (VolumeEntry, error) {
	return v.WriteFile(ctx, path, bytes.NewReader(data), o)
}

// bearer signs a content request with the volume's token, and with it
// alone: the content API never sees the API key.
func (v *Volume) bearer(ctx context.Context) (rest.RequestEditorFn, error) {
	tok, err := v.token(ctx)
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+tok)
		return nil
	}, nil
}

func volumeEntry(e *rest.VolumeEntryStat) VolumeEntry {
	out := VolumeEntry{Name: e.Name, Type: string(e.Type), Path: e.Path, Size: e.Size, Mode: e.Mode,
		UID: e.UID, GID: e.GID, ATime: e.Atime, MTime: e.Mtime, CTime: e.Ctime}
	if e.Target != nil {
		out.Target = *e.Target
	}
	return out
}
