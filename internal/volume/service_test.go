package volume_test

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/internal/volume"
)

var _ apiserver.Volumes = (*volume.Service)(nil)

func newService(t *testing.T, sizeMB, teamMax int) (*volume.Service, store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := volume.NewShared(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := sqlitetest.Open(t)
	s, err := volume.New(volume.Options{Store: st, Backend: b, DefaultSizeMB: sizeMB, TeamMaxMB: teamMax})
	if err != nil {
		t.Fatal(err)
	}
	return s, st, dir
}

func TestCreateNamesAndQuota(t *testing.T) {
	ctx := context.Background()
	s, st, _ := newService(t, 10, 25)
	for _, team := range []*store.Team{{ID: "big", MaxVolumeMB: store.Unlimited}, {ID: "small", MaxVolumeMB: 5}} {
		if err := st.PutTeam(ctx, team); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		team, name string
		want       error
	}{
		{"a", "data", nil},
		{"a", "data", errdefs.ErrAlreadyExists},
		{"b", "data", nil}, // the same name in another team
		{"a", "", errdefs.ErrInvalidArgument},
		{"a", "has space", errdefs.ErrInvalidArgument},
		{"a", "../x", errdefs.ErrInvalidArgument},
		{"a", strings.Repeat("n", 64), errdefs.ErrInvalidArgument},
		{"a", strings.Repeat("n", 63), nil},
		{"a", "third", errdefs.ErrQuotaExceeded}, // 30 MB > the server's 25
		{"small", "x", errdefs.ErrQuotaExceeded}, // 10 MB > its own 5
		{"big", "x1", nil},
		{"big", "x2", nil},
		{"big", "x3", nil}, // unlimited
	}
	for _, tc := range cases {
		v, err := s.Create(ctx, tc.team, tc.name)
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Fatalf("Create(%q, %q) = %v, want %v", tc.team, tc.name, err, tc.want)
		}
		if err != nil {
			continue
		}
		if !strings.HasPrefix(v.ID, "vol_") || len(v.ID) != 24 || len(v.Token) != 43 || v.SizeMB != 10 || v.TeamID != tc.team {
			t.Fatalf("Create(%q, %q) = %+v", tc.team, tc.name, v)
		}
	}
}

func TestAccessAcrossTeams(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t, 1, 0)
	a, err := s.Create(ctx, "a", "vol")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(ctx, "b", "vol")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"get other team's", errOnly(s.Get(ctx, "b", a.ID)), errdefs.ErrNotFound},
		{"get unknown", errOnly(s.Get(ctx, "a", "vol_nope")), errdefs.ErrNotFound},
		{"delete other team's", s.Delete(ctx, "b", a.ID), errdefs.ErrNotFound},
		{"admin gets any", errOnly(s.Get(ctx, "", a.ID)), nil},
		{"no token", errOnly(s.Authorize(ctx, a.ID, "")), errdefs.ErrUnauthenticated},
		{"other volume's token", errOnly(s.Authorize(ctx, a.ID, b.Token)), errdefs.ErrPermissionDenied},
		{"unknown volume", errOnly(s.Authorize(ctx, "vol_nope", a.Token)), errdefs.ErrNotFound},
		{"own token", errOnly(s.Authorize(ctx, a.ID, a.Token)), nil},
	}
	for _, tc := range cases {
		if (tc.want == nil) != (tc.err == nil) || (tc.want != nil && !errors.Is(tc.err, tc.want)) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	list, err := s.List(ctx, "a")
	if err != nil || len(list) != 1 || list[0].ID != a.ID {
		t.Fatalf("List(a) = %+v, %v", list, err)
	}
	if all, _ := s.List(ctx, ""); len(all) != 2 {
		t.Fatalf("List(admin) has %d volumes, want 2", len(all))
	}
}

func errOnly[T any](_ T, err error) error { return err }

func TestDeleteWhileMounted(t *testing.T) {
	ctx := context.Background()
	s, st, dir := newService(t, 1, 0)
	v, err := s.Create(ctx, "a", "vol")
	if err != nil {
		t.Fatal(err)
	}
	m := []store.VolumeMount{{VolumeID: v.ID, Name: v.Name, Path: "/mnt/v"}}
	for _, sb := range []*store.Sandbox{
		{ID: "sb2", State: store.SandboxPaused, VolumeMounts: m},
		{ID: "sb1", State: store.SandboxRunning, VolumeMounts: m},
	} {
		if err := st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	err = s.Delete(ctx, "a", v.ID)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "sb1, sb2") {
		t.Fatalf("Delete of a mounted volume = %v, want failed precondition naming sb1, sb2", err)
	}
	info, err := s.Get(ctx, "a", v.ID)
	if err != nil || !slices.Equal(info.Sandboxes, []string{"sb1", "sb2"}) {
		t.Fatalf("Get = %+v, %v", info, err)
	}
	for _, id := range []string{"sb1", "sb2"} {
		if err := st.DeleteSandbox(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "a", v.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authorize(ctx, v.ID, v.Token); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("the token of a deleted volume: %v, want not found", err)
	}
	if _, err := os.Stat(dir + "/volumes/" + v.ID); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the deleted volume's data is still there: %v", err)
	}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t, 1, 0)
	v, err := s.Create(ctx, "a", "data")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "a", "cache"); err != nil {
		t.Fatal(err)
	}
	mk := func(pairs ...string) []store.VolumeMount {
		var out []store.VolumeMount
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, store.VolumeMount{Name: pairs[i], Path: pairs[i+1]})
		}
		return out
	}
	many := mk()
	for range volume.MaxMounts + 1 {
		many = append(many, store.VolumeMount{Name: "data", Path: "/m" + strings.Repeat("x", len(many)+1)})
	}
	cases := []struct {
		name   string
		team   string
		mounts []store.VolumeMount
		want   error
	}{
		{"one", "a", mk("data", "/mnt/data"), nil},
		{"two", "a", mk("data", "/mnt/data", "cache", "/home/user/.cache"), nil},
		{"unknown name", "a", mk("nope", "/mnt"), errdefs.ErrNotFound},
		{"no name", "a", mk("", "/mnt"), errdefs.ErrInvalidArgument},
		{"other team", "b", mk("data", "/mnt"), errdefs.ErrNotFound},
		{"relative", "a", mk("data", "mnt"), errdefs.ErrInvalidArgument},
		{"unclean", "a", mk("data", "/mnt/../etc"), errdefs.ErrInvalidArgument},
		{"root", "a", mk("data", "/"), errdefs.ErrInvalidArgument},
		{"proc", "a", mk("data", "/proc/x"), errdefs.ErrInvalidArgument},
		{"dev", "a", mk("data", "/dev"), errdefs.ErrInvalidArgument},
		{"warren", "a", mk("data", "/.warren/envd"), errdefs.ErrInvalidArgument},
		{"same path", "a", mk("data", "/mnt", "cache", "/mnt"), errdefs.ErrInvalidArgument},
		{"nested", "a", mk("data", "/mnt", "cache", "/mnt/c"), errdefs.ErrInvalidArgument},
		{"sibling prefix", "a", mk("data", "/mnt", "cache", "/mnt2"), nil},
		{"too many", "a", many, errdefs.ErrInvalidArgument},
	}
	for _, tc := range cases {
		got, err := s.Resolve(ctx, tc.team, tc.mounts)
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			continue
		}
		if err == nil && got[0].VolumeID != v.ID {
			t.Errorf("%s: %+v, want the first mount's id %s", tc.name, got, v.ID)
		}
	}
}

// TestSharedLimit: on shared storage the content API refuses a write
// past the size, and a volume filled past it behind the API's back (by a
// sandbox) is refused new mounts.
func TestSharedLimit(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t, 1, 0)
	v, err := s.Create(ctx, "a", "data")
	if err != nil {
		t.Fatal(err)
	}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	a := volume.Attrs{UID: &uid, GID: &gid}
	half := strings.Repeat("x", 512<<10)
	if _, err := s.Write(ctx, v, "/one", strings.NewReader(half), a, false); err != nil {
		t.Fatal(err)
	}
	_, err = s.Write(ctx, v, "/two", strings.NewReader(half+half), a, false)
	if !errors.Is(err, errdefs.ErrNoSpace) {
		t.Fatalf("a write past the size: %v, want no space", err)
	}
	r, e, err := s.Open(ctx, v, "/one")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if len(b) != len(half) || e.Size != int64(len(half)) {
		t.Fatalf("read back %d bytes, entry %+v", len(b), e)
	}
	host, err := s.HostPath(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host+"/sandbox", []byte(half+half), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HostPath(ctx, v.ID); !errors.Is(err, errdefs.ErrNoSpace) {
		t.Fatalf("HostPath of a volume over its size: %v, want no space", err)
	}
	info, err := s.Get(ctx, "a", v.ID)
	if err != nil || info.UsedBytes < 3*int64(len(half)) {
		t.Fatalf("Get = %+v, %v; want at least %d bytes used", info, err, 3*len(half))
	}
}

// failingBackend is a shared backend whose Create fails.
type failingBackend struct{ *volume.Shared }

func (failingBackend) Create(context.Context, string, int) error {
	return errdefs.New(errdefs.ErrNoSpace, "the host's disk is full")
}

// TestCreateUndone: a volume whose data cannot be made leaves no record,
// so its name is free again.
func TestCreateUndone(t *testing.T) {
	ctx := context.Background()
	b, err := volume.NewShared(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := sqlitetest.Open(t)
	s, err := volume.New(volume.Options{Store: st, Backend: failingBackend{b}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "a", "data"); !errors.Is(err, errdefs.ErrNoSpace) {
		t.Fatalf("Create over a failing backend: %v, want the backend's no space", err)
	}
	if vols, _ := st.ListVolumes(ctx, ""); len(vols) != 0 {
		t.Fatalf("records left: %+v", vols)
	}
}

// TestSharedReplace: replacing a file counts the space it frees, so a
// nearly full shared volume can still rewrite its files.
func TestSharedReplace(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t, 1, 0)
	v, err := s.Create(ctx, "a", "data")
	if err != nil {
		t.Fatal(err)
	}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	a := volume.Attrs{UID: &uid, GID: &gid}
	big := strings.Repeat("y", 900<<10)
	if _, err := s.Write(ctx, v, "/f", strings.NewReader(big), a, false); err != nil {
		t.Fatal(err)
	}
	e, err := s.Write(ctx, v, "/f", strings.NewReader(big+"z"), a, true)
	if err != nil || e.Size != int64(len(big))+1 {
		t.Fatalf("replacing a file in a nearly full volume: %+v, %v", e, err)
	}
}

func TestNewBackend(t *testing.T) {
	data, shared := t.TempDir(), t.TempDir()
	cases := []struct {
		shared string
		capped bool
		dir    string
	}{
		{"", true, data + "/volumes"},
		{shared, false, shared + "/volumes"},
	}
	for _, tc := range cases {
		b, err := volume.NewBackend(data, tc.shared)
		if err != nil {
			t.Fatal(err)
		}
		if b.Capped() != tc.capped {
			t.Errorf("shared %q: capped %v, want %v", tc.shared, b.Capped(), tc.capped)
		}
		if fi, err := os.Stat(tc.dir); err != nil || !fi.IsDir() {
			t.Errorf("shared %q: %s not made: %v", tc.shared, tc.dir, err)
		}
	}
}

// TestServiceLocal drives the service over a Local backend as root: the
// content API's default owner (root) and a full volume's 507 class.
func TestServiceLocal(t *testing.T) {
	testutil.RequiresRoot(t)
	testutil.RequiresBinary(t, "mkfs.ext4")
	ctx := context.Background()
	b, err := volume.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := volume.New(volume.Options{Store: sqlitetest.Open(t), Backend: b, DefaultSizeMB: 16})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Create(ctx, "a", "data")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Delete(context.Background(), v.ID) })
	e, err := s.Write(ctx, v, "/f", strings.NewReader("x"), volume.Attrs{}, false)
	if err != nil || e.UID != 0 || e.GID != 0 || e.Mode != 0o644 {
		t.Fatalf("Write = %+v, %v; want root's, 0644", e, err)
	}
	_, err = s.Write(ctx, v, "/big", io.LimitReader(zeroReader{}, 32<<20), volume.Attrs{}, false)
	if !errors.Is(err, errdefs.ErrNoSpace) {
		t.Fatalf("32 MB into 16: %v, want no space", err)
	}
	info, err := s.Get(ctx, "a", v.ID)
	if err != nil || info.UsedBytes <= 0 || info.SizeMB != 16 {
		t.Fatalf("Get = %+v, %v", info, err)
	}
	host, err := s.HostPath(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a", v.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(host); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the volume's root is still there: %v", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }
