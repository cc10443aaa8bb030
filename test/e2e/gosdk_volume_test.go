package e2e

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestGoSDKVolumes drives a real server's volumes with the Go SDK: create,
// WriteFile (streamed and refused without Force), ReadFile, List, Stat, a
// sandbox created with VolumeMounts reading the file and writing one
// back, DeleteVolume refused while it is mounted, Remove, and
// DeleteVolume, after which the volume is gone.
func TestGoSDKVolumes(t *testing.T) {
	cfg := loadConfig(t)
	s := launchVolumeServer(t, goSDKVolumeIndex)
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	v, err := c.CreateVolume(ctx, "sdk-data")
	if err != nil || v.ID == "" || v.Name != "sdk-data" || v.Token == "" {
		t.Fatalf("CreateVolume = %+v, %v", v, err)
	}
	if _, err := v.MakeDir(ctx, "/in", warren.VolumeWriteOptions{}); err != nil {
		t.Fatalf("MakeDir: %v", err)
	}
	data := bytes.Repeat([]byte("volume "), 10000)
	e, err := v.WriteFile(ctx, "/in/f.txt", bytes.NewReader(data), warren.VolumeWriteOptions{})
	if err != nil || e.Path != "/in/f.txt" || e.Size != int64(len(data)) || e.Type != warren.VolumeFile {
		t.Fatalf("WriteFile = %+v, %v", e, err)
	}
	if _, err := v.WriteFile(ctx, "/in/f.txt", strings.NewReader("x"), warren.VolumeWriteOptions{}); !errors.Is(err, warren.ErrConflict) {
		t.Errorf("WriteFile over a file without Force = %v, want ErrConflict", err)
	}
	if got, err := v.ReadFile(ctx, "/in/f.txt"); err != nil || !bytes.Equal(got, data) {
		t.Errorf("ReadFile: %d bytes, %v", len(got), err)
	}
	list, err := v.List(ctx, "/in", 1)
	if err != nil || len(list) != 1 || list[0].Name != "f.txt" || list[0].Size != int64(len(data)) {
		t.Errorf("List(/in) = %+v, %v", list, err)
	}
	if st, err := v.Stat(ctx, "/in"); err != nil || st.Type != warren.VolumeDirectory || st.Name != "in" {
		t.Errorf("Stat(/in) = %+v, %v", st, err)
	}
	if _, err := v.Stat(ctx, "/nope"); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("Stat of a missing path = %v, want ErrNotFound", err)
	}

	goSDKVolumeMount(t, c, v, data)

	if err := v.Remove(ctx, "/in"); err != nil {
		t.Fatalf("Remove(/in): %v", err)
	}
	if ok, err := v.Exists(ctx, "/in/f.txt"); err != nil || ok {
		t.Errorf("after Remove, Exists(/in/f.txt) = %v, %v", ok, err)
	}
	if err := c.DeleteVolume(ctx, v.ID); err != nil {
		t.Fatalf("DeleteVolume: %v", err)
	}
	if _, err := c.GetVolume(ctx, v.ID); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("GetVolume after DeleteVolume = %v, want ErrNotFound", err)
	}
}

// goSDKVolumeMount creates a sandbox with v at /mnt/v: it reads the file
// the SDK wrote and writes one the SDK reads; v cannot be deleted while
// the sandbox runs.
func goSDKVolumeMount(t *testing.T, c *warren.Client, v *warren.Volume, data []byte) {
	ctx := t.Context()
	mounts := []warren.VolumeMount{{Name: v.Name, Path: "/mnt/v"}}
	sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 2 * time.Minute, VolumeMounts: mounts})
	if err != nil {
		t.Fatalf("Create with VolumeMounts: %v", err)
	}
	defer sb.Kill(ctx)
	if info, err := sb.GetInfo(ctx); err != nil || !slices.Equal(info.VolumeMounts, mounts) {
		t.Errorf("GetInfo's VolumeMounts = %+v, %v; want %+v", info.VolumeMounts, err, mounts)
	}
	r, err := sb.Commands.Run(ctx, "wc -c < /mnt/v/in/f.txt; echo back > /mnt/v/out.txt", warren.CommandOptions{User: "root"})
	if err != nil || strings.TrimSpace(r.Stdout) != strconv.Itoa(len(data)) {
		t.Errorf("the sandbox read the volume: %+v, %v; want %d bytes", r, err, len(data))
	}
	if got, err := v.ReadFile(ctx, "/out.txt"); err != nil || string(got) != "back\n" {
		t.Errorf("ReadFile of the sandbox's file = %q, %v", got, err)
	}
	if err := c.DeleteVolume(ctx, v.ID); !errors.Is(err, warren.ErrConflict) || !strings.Contains(err.Error(), sb.ID) {
		t.Errorf("DeleteVolume while mounted = %v, want ErrConflict naming %s", err, sb.ID)
	}
	if err := sb.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
}
