package image

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

var ctx = context.Background()

func TestPullRandom(t *testing.T) {
	host := startRegistry(t, nil)
	img, err := random.Image(1500, 3)
	if err != nil {
		t.Fatal(err)
	}
	push(t, host+"/rand/img:v1", img)
	e := newEnv(t)

	got, err := e.p.Resolve(ctx, testTeam, host+"/rand/img:v1", nil, e.logger)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	if got.Digest != want.String() || got.Ref != host+"/rand/img:v1" {
		t.Errorf("Ref, Digest = %s, %s; want %s", got.Ref, got.Digest, want)
	}
	ids := diffIDs(t, img)
	if len(got.Layers) != 3 {
		t.Fatalf("layers = %v", got.Layers)
	}
	for i, dir := range got.Layers { // top first
		if dir != e.store.Path(ids[2-i]) {
			t.Errorf("Layers[%d] = %s, want layer %s", i, dir, ids[2-i])
		}
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "random_file_") {
			t.Errorf("layer %s holds %v, %v", dir, ents, err)
		}
	}
	if !slices.ContainsFunc(e.lines, func(s string) bool {
		return strings.HasPrefix(s, "pulling layer 2/3 sha256:"+ids[1][:12]+"…") && strings.HasSuffix(s, "KiB)")
	}) {
		t.Errorf("progress = %q", e.lines)
	}

	e.lines = nil
	if _, err := e.p.Resolve(ctx, testTeam, host+"/rand/img:v1", nil, e.logger); err != nil {
		t.Fatal(err)
	}
	if n := len(slices.DeleteFunc(e.lines, func(s string) bool { return !strings.HasSuffix(s, "already present") })); n != 3 {
		t.Errorf("second pull re-extracted layers: %q", e.lines)
	}
}

func TestPullFilesystemAndConfig(t *testing.T) {
	host := startRegistry(t, nil)
	base := layerOf(t,
		dir("etc/"), file("etc/hosts", "127.0.0.1 localhost"),
		ent{name: "bin/tool", body: "#!/bin/sh", typ: '0', mode: 0o4755},
		hardlink("bin/tool2", "bin/tool"),
		symlink("lib", "usr/lib"), file("usr/lib/libc.so", "libc"),
	)
	cfg := v1.Config{
		Env: []string{"PATH=/usr/bin", "A=b"}, WorkingDir: "/app", User: "1000:1000",
		Entrypoint: []string{"/bin/tool"}, Cmd: []string{"--serve"},
		Labels:       map[string]string{"org.example": "yes"},
		ExposedPorts: map[string]struct{}{"8080/tcp": {}, "53/udp": {}},
	}
	push(t, host+"/app:1", imageOf(t, cfg, base))
	e := newEnv(t)
	img, err := e.p.Resolve(ctx, testTeam, host+"/app:1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := img.Config
	if !slices.Equal(c.Env, cfg.Env) || c.WorkingDir != "/app" || c.User != "1000:1000" ||
		!slices.Equal(c.Entrypoint, cfg.Entrypoint) || !slices.Equal(c.Cmd, cfg.Cmd) ||
		c.Labels["org.example"] != "yes" || !slices.Equal(c.ExposedPorts, []string{"53/udp", "8080/tcp"}) {
		t.Errorf("config = %+v", c)
	}
	d := img.Layers[0]
	if got := readFile(t, filepath.Join(d, "etc/hosts")); got != "127.0.0.1 localhost" {
		t.Errorf("etc/hosts = %q", got)
	}
	st1, _ := os.Lstat(filepath.Join(d, "bin/tool"))
	st2, _ := os.Lstat(filepath.Join(d, "bin/tool2"))
	if !os.SameFile(st1, st2) || st1.Mode()&os.ModeSetuid == 0 {
		t.Errorf("bin/tool %v, hardlink kept: %v", st1.Mode(), os.SameFile(st1, st2))
	}
	if target, _ := os.Readlink(filepath.Join(d, "lib")); target != "usr/lib" {
		t.Errorf("lib -> %q", target)
	}
}

// TestPullWhiteouts checks the overlay view of a two-layer image where the
// upper layer deletes a file and makes a directory opaque.
func TestPullWhiteouts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("opaque directories need trusted.* xattrs, which need root")
	}
	host := startRegistry(t, nil)
	lower := layerOf(t, file("gone.txt", "old"), file("old/a", "a"), file("old/b", "b"), file("keep", "k"))
	upper := layerOf(t, file(".wh.gone.txt", ""), dir("old/"), file("old/.wh..wh..opq", ""), file("old/new", "n"))
	push(t, host+"/wh:1", imageOf(t, v1.Config{}, lower, upper))
	e := newEnv(t)
	img, err := e.p.Resolve(ctx, testTeam, host+"/wh:1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(img.Layers[0], "gone.txt"), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != 0 {
		t.Errorf("gone.txt in the top layer is not a whiteout: %v mode %o", err, st.Mode)
	}
	buf := make([]byte, 4)
	if n, err := unix.Lgetxattr(filepath.Join(img.Layers[0], "old"), "trusted.overlay.opaque", buf); err != nil || string(buf[:n]) != "y" {
		t.Errorf("old is not opaque: %q %v", buf[:n], err)
	}

	mnt := t.TempDir()
	if err := unix.Mount("overlay", mnt, "overlay", unix.MS_RDONLY, "lowerdir="+strings.Join(img.Layers, ":")); err != nil {
		t.Skipf("cannot mount overlay here: %v", err)
	}
	defer unix.Unmount(mnt, unix.MNT_DETACH)
	if _, err := os.Lstat(filepath.Join(mnt, "gone.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("gone.txt visible through the whiteout: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(mnt, "old"))
	if len(ents) != 1 || ents[0].Name() != "new" {
		t.Errorf("opaque old/ shows %v", ents)
	}
	if readFile(t, filepath.Join(mnt, "keep")) != "k" {
		t.Error("keep lost")
	}
}

func TestPullPlatformIndex(t *testing.T) {
	host := startRegistry(t, nil)
	arm := imageOf(t, v1.Config{}, layerOf(t, file("arch", "arm64")))
	amd := imageOf(t, v1.Config{}, layerOf(t, file("arch", "amd64")))
	plat := func(arch string) v1.Descriptor {
		return v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}
	}
	multi := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: arm, Descriptor: plat("arm64")},
		mutate.IndexAddendum{Add: amd, Descriptor: plat("amd64")})
	armOnly := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: arm, Descriptor: plat("arm64")})
	for ref, idx := range map[string]v1.ImageIndex{"/multi:1": multi, "/armonly:1": armOnly} {
		if err := remote.WriteIndex(mustRef(host+ref), idx); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t)
	img, err := e.p.Resolve(ctx, testTeam, host+"/multi:1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(img.Layers[0], "arch")); got != "amd64" {
		t.Errorf("picked the %s image", got)
	}
	if d, _ := multi.Digest(); img.Digest != d.String() {
		t.Errorf("digest %s, want the index digest %s", img.Digest, d)
	}
	if _, err := e.p.Resolve(ctx, testTeam, host+"/armonly:1", nil, nil); !errdefs.IsNotFound(err) || !strings.Contains(err.Error(), "linux/amd64") {
		t.Errorf("arm-only index: %v, want not found naming linux/amd64", err)
	}
}

func TestPullSharedLayers(t *testing.T) {
	host := startRegistry(t, nil)
	base := layerOf(t, file("base", "shared"))
	push(t, host+"/one:1", imageOf(t, v1.Config{}, base, layerOf(t, file("one", "1"))))
	push(t, host+"/two:1", imageOf(t, v1.Config{}, base, layerOf(t, file("two", "2"))))
	e := newEnv(t)
	one, err := e.p.Resolve(ctx, testTeam, host+"/one:1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	two, err := e.p.Resolve(ctx, testTeam, host+"/two:1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if one.Layers[1] != two.Layers[1] {
		t.Errorf("base layer not shared: %s vs %s", one.Layers[1], two.Layers[1])
	}
	if keys, _ := e.store.List(); len(keys) != 3 {
		t.Errorf("store holds %d layers, want 3", len(keys))
	}
}

func TestPullDuplicateLayer(t *testing.T) {
	host := startRegistry(t, nil)
	l := layerOf(t, file("same", "x"))
	push(t, host+"/dup:1", imageOf(t, v1.Config{}, l, layerOf(t, file("mid", "m")), l))
	e := newEnv(t)
	img, err := e.p.Resolve(ctx, testTeam, host+"/dup:1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Layers) != 2 || !strings.HasPrefix(filepath.Base(img.Layers[0]), diffIDs(t, imageOf(t, v1.Config{}, l))[0][:20]) {
		t.Errorf("layers = %v, want the repeated layer once, on top", img.Layers)
	}
}

func TestPullAuth(t *testing.T) {
	host := startRegistry(t, basicAuth("alice", "s3cret"))
	push(t, host+"/private:1", imageOf(t, v1.Config{}, layerOf(t, file("f", "x"))),
		remote.WithAuth(&authn.Basic{Username: "alice", Password: "s3cret"}))
	tests := []struct {
		name    string
		auth    *Auth
		wantErr error
		msg     string
	}{
		{"right credentials", &Auth{Username: "alice", Password: "s3cret"}, nil, ""},
		{"wrong password", &Auth{Username: "alice", Password: "nope"}, errdefs.ErrPermissionDenied, "registry refused the credentials for " + host + "/private:1"},
		{"no credentials", nil, errdefs.ErrPermissionDenied, host + "/private:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.p.Resolve(ctx, testTeam, host+"/private:1", tc.auth, nil)
			if !errors.Is(err, tc.wantErr) && !(err == nil && tc.wantErr == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q lacks %q", err, tc.msg)
			}
		})
	}
}

func TestPullErrors(t *testing.T) {
	host := startRegistry(t, nil)
	push(t, host+"/exists:1", imageOf(t, v1.Config{}, layerOf(t, file("f", "x"))))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	tests := []struct {
		name, ref string
		want      error
	}{
		{"missing repo", host + "/nope:1", errdefs.ErrNotFound},
		{"missing tag", host + "/exists:2", errdefs.ErrNotFound},
		{"missing digest", host + "/exists@sha256:" + strings.Repeat("0", 64), errdefs.ErrNotFound},
		{"unreachable registry", closed + "/x:1", errdefs.ErrUnavailable},
		{"invalid reference", "UPPER/case::", errdefs.ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.p.Resolve(ctx, testTeam, tc.ref, nil, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want == errdefs.ErrNotFound && !strings.Contains(err.Error(), tc.ref) {
				t.Errorf("message %q does not name %s", err, tc.ref)
			}
		})
	}
}

func TestPullMaliciousLayers(t *testing.T) {
	host := startRegistry(t, nil)
	sentinel := t.TempDir()
	tests := []struct {
		name string
		ents []ent
	}{
		{"absolute path", []ent{file(sentinel+"/pwned", "x")}},
		{"dot-dot escape", []ent{file("../../pwned", "x")}},
		{"char device", []ent{{name: "dev/pwned", typ: '3'}}},
		{"symlink then write through", []ent{symlink("link", sentinel), file("link/pwned", "x")}},
		{"hardlink to host file", []ent{hardlink("pwned", "/etc/passwd")}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := host + "/evil:" + string(rune('a'+i))
			push(t, ref, imageOf(t, v1.Config{}, layerOf(t, file("ok", "fine")), layerOf(t, tc.ents...)))
			e := newEnv(t)
			_, err := e.p.Resolve(ctx, testTeam, ref, nil, nil)
			if !errdefs.IsInvalidArgument(err) {
				t.Errorf("err = %v, want invalid argument", err)
			}
			if ents, _ := os.ReadDir(sentinel); len(ents) != 0 {
				t.Errorf("sentinel dir got %v", ents)
			}
			if hits := findNamed(t, e.root, "pwned"); len(hits) != 0 {
				t.Errorf("written: %v", hits)
			}
			if left := leftovers(t, e); len(left) != 0 {
				t.Errorf("store keeps %v", left)
			}
			bad := diffIDs(t, imageOf(t, v1.Config{}, layerOf(t, tc.ents...)))[0]
			if e.store.Has(bad) {
				t.Error("the rejected layer is in the store")
			}
		})
	}
}

func TestPullDiffIDMismatch(t *testing.T) {
	host := startRegistry(t, nil)
	victim := layerOf(t, file("bin/sh", "real shell"))
	evil := imageOf(t, v1.Config{}, layerOf(t, file("bin/sh", "evil shell")))
	cf, _ := evil.ConfigFile()
	cf = cf.DeepCopy()
	cf.RootFS.DiffIDs[0], _ = victim.DiffID() // claim to be the victim's layer
	evil, err := mutate.ConfigFile(evil, cf)
	if err != nil {
		t.Fatal(err)
	}
	push(t, host+"/evil:1", evil)
	e := newEnv(t)
	if _, err := e.p.Resolve(ctx, testTeam, host+"/evil:1", nil, nil); !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "diffID") {
		t.Errorf("err = %v, want a diffID mismatch", err)
	}
	if id, _ := victim.DiffID(); e.store.Has(id.Hex) {
		t.Error("evil content stored under the victim's diffID")
	}
}

func TestPullLayerLimit(t *testing.T) {
	host := startRegistry(t, nil)
	push(t, host+"/big:1", imageOf(t, v1.Config{}, layerOf(t, file("big", strings.Repeat("x", 4096)))))
	e := newEnv(t)
	e.p.LayerLimit = 1000
	if _, err := e.p.Resolve(ctx, testTeam, host+"/big:1", nil, nil); !errors.Is(err, errdefs.ErrNoSpace) {
		t.Errorf("err = %v, want ErrNoSpace", err)
	}
	if keys, _ := e.store.List(); len(keys) != 0 {
		t.Errorf("store holds %v", keys)
	}
	if left := leftovers(t, e); len(left) != 0 {
		t.Errorf("store keeps %v", left)
	}
}

func TestParseRefLoopbackIsPlainHTTP(t *testing.T) {
	for _, ref := range []string{"localhost:5000/a", "localhost/a", "127.0.0.1:5000/a", "127.0.0.2/a", "[::1]:5000/a"} {
		r, err := parseRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Context().Registry.Scheme(); s != "http" {
			t.Errorf("%s: scheme %s", ref, s)
		}
	}
	if r, _ := parseRef("example.com/a"); r.Context().Registry.Scheme() != "https" {
		t.Error("a public registry got plain http")
	}
}
