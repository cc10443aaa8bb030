package warren

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// Volume is a team's persistent directory that outlives sandboxes:
// sandboxes mount it by name ([CreateOptions].VolumeMounts) and its
// content methods (List, ReadFile, WriteFile, …) read and write it with
// Token as the bearer, without the API key.
type Volume struct {
	ID   string
	Name string
	// Token is the bearer of the volume's content API. ListVolumes does
	// not return it: a content call on a listed volume fetches it once.
	Token string

	// What warren shows beside E2B's fields, when the server sent them.
	SizeMB    int       // the size limit
	UsedBytes int64     // bytes its files take
	Sandboxes []string  // the running or paused sandboxes that mount it
	CreatedAt time.Time // zero when unknown

	client *Client
	mu     sync.Mutex // guards Token when a content call fetches it
}

// VolumeMount mounts the team's volume Name read-write at Path (absolute)
// in a sandbox, as E2B's volumeMounts ({path: volume} in the JS SDK).
type VolumeMount struct {
	Name string
	Path string
}

// CreateVolume makes a volume; its name is unique in the team:
// letters, digits, '_' and '-', at most 63 characters. A name the team
// already has is ErrConflict.
func (c *Client) CreateVolume(ctx context.Context, name string) (*Volume, error) {
	resp, err := c.api.CreateVolumeWithResponse(ctx, rest.NewVolume{Name: name})
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return nil, err
	}
	return c.volumeWithToken(resp.JSON201), nil
}

// GetVolume returns a volume with its token; another team's is
// ErrNotFound.
func (c *Client) GetVolume(ctx context.Context, id string) (*Volume, error) {
	resp, err := c.api.GetVolumeWithResponse(ctx, id)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return c.volumeWithToken(resp.JSON200), nil
}

// ListVolumes returns the team's volumes (the admin key: every team's),
// by name, without their tokens.
func (c *Client) ListVolumes(ctx context.Context) ([]*Volume, error) {
	resp, err := c.api.ListVolumesWithResponse(ctx)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	out := make([]*Volume, 0, len(*resp.JSON200))
	for _, v := range *resp.JSON200 {
		out = append(out, c.volume(v))
	}
	return out, nil
}

// DeleteVolume deletes a volume with its data and revokes its token. The
// server refuses (ErrConflict) while a running or paused sandbox mounts it.
func (c *Client) DeleteVolume(ctx context.Context, id string) error {
	resp, err := c.api.DeleteVolumeWithResponse(ctx, id)
	return answer(resp, err, http.StatusNoContent)
}

// Delete is DeleteVolume of v.
func (v *Volume) Delete(ctx context.Context) error { return v.client.DeleteVolume(ctx, v.ID) }

func (c *Client) volume(r rest.Volume) *Volume {
	v := &Volume{ID: r.VolumeID, Name: r.Name, client: c}
	if r.SizeMB != nil {
		v.SizeMB = *r.SizeMB
	}
	if r.UsedBytes != nil {
		v.UsedBytes = *r.UsedBytes
	}
	if r.Sandboxes != nil && len(*r.Sandboxes) > 0 {
		v.Sandboxes = *r.Sandboxes
	}
	if r.CreatedAt != nil {
		v.CreatedAt = *r.CreatedAt
	}
	return v
}

func (c *Client) volumeWithToken(r *rest.VolumeAndToken) *Volume {
	v := c.volume(rest.Volume{VolumeID: r.VolumeID, Name: r.Name, SizeMB: r.SizeMB, UsedBytes: r.UsedBytes,
		Sandboxes: r.Sandboxes, CreatedAt: r.CreatedAt})
	v.Token = r.Token
	return v
}

// token returns the content API's bearer, asking the server for it the
// first time when v came from ListVolumes.
func (v *Volume) token(ctx context.Context) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.Token != "" {
		return v.Token, nil
	}
	got, err := v.client.GetVolume(ctx, v.ID)
	if err != nil {
		return "", err
	}
	if got.Token == "" {
		return "", fmt.Errorf("warren: volume %s: the server sent no token", v.ID)
	}
	v.Token = got.Token
	return v.Token, nil
}

// restMounts is the wire form of a create's volume mounts; nil for none.
func restMounts(m []VolumeMount) *[]rest.SandboxVolumeMount {
	if len(m) == 0 {
		return nil
	}
	out := make([]rest.SandboxVolumeMount, len(m))
	for i, vm := range m {
		out[i] = rest.SandboxVolumeMount{Name: vm.Name, Path: vm.Path}
	}
	return &out
}

// volumeMounts reads a sandbox's mounts from the wire; nil for none.
func volumeMounts(m *[]rest.SandboxVolumeMount) []VolumeMount {
	if m == nil || len(*m) == 0 {
		return nil
	}
	out := make([]VolumeMount, len(*m))
	for i, vm := range *m {
		out[i] = VolumeMount{Name: vm.Name, Path: vm.Path}
	}
	return out
}
