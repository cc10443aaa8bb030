// Package image turns OCI and Docker images into stacks of layer
// directories for overlayfs: it pulls from registries, imports `docker save`
// tarballs and OCI layouts, and extracts each layer once into a shared
// layer.Store keyed by its diffID, so images that share a base share it on
// disk too.
package image

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// Image is a resolved image, ready to mount.
type Image struct {
	Ref    string // normalised reference, e.g. index.docker.io/library/alpine:3.20
	Digest string // manifest (or index) digest; the config digest for docker-save imports
	// Layers are the layer directories, TOP FIRST, as overlayfs lowerdir wants them.
	Layers []string
	Config Config
}

// Config is the part of the image config a sandbox needs.
type Config struct {
	Env          []string          `json:"env,omitempty"`
	WorkingDir   string            `json:"workingDir,omitempty"`
	User         string            `json:"user,omitempty"`
	Entrypoint   []string          `json:"entrypoint,omitempty"`
	Cmd          []string          `json:"cmd,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	ExposedPorts []string          `json:"exposedPorts,omitempty"` // "80/tcp", sorted
}

// Auth is a registry username and password (or token as password), or
// AWS keys that a pull first trades for an ECR login.
type Auth struct {
	Username string
	Password string
	AWS      *AWSKeys
}

func (a *Auth) set() bool { return a != nil && (a.Username != "" || a.Password != "" || a.AWS != nil) }

// ImportedImage is an image imported from a file, as kept in the local index.
type ImportedImage struct {
	// Team imported it; only its builds see it ("" in an index from
	// before teams: the default team, as store.TeamOf has it).
	Team   string   `json:"team,omitempty"`
	Ref    string   `json:"ref"`
	Digest string   `json:"digest"`
	Layers []string `json:"layers"` // layer.Store keys (diffID hex), top first
	Config Config   `json:"config"`
	// Size is the disk space of the image's layers when imported, shared
	// layers included.
	Size     int64     `json:"size"`
	Imported time.Time `json:"imported"`
}

// Puller resolves image references to extracted layers.
type Puller struct {
	root   string
	layers *layer.Store

	// LayerLimit caps the file content of one layer in bytes; a layer over
	// it fails with errdefs.ErrNoSpace. Zero means no cap.
	LayerLimit int64
	// Dial, when set, makes every connection to registries, their token
	// realms and redirects, and cloud login endpoints (netguard.Guard
	// keeps users from reaching the host's internal addresses).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu sync.Mutex // serialises read-modify-write of the index file

	// For tests: talk to the registry through this, and retry fast.
	transport http.RoundTripper
	backoff   *remote.Backoff
}

// roundTripper is how the puller talks HTTP: the test transport, a
// transport dialing through Dial, or the default.
func (p *Puller) roundTripper() http.RoundTripper {
	if p.transport != nil || p.Dial == nil {
		return p.transport
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = p.Dial
	return t
}

// platform is what sandboxes run.
var platform = v1.Platform{OS: "linux", Architecture: "amd64"}

const indexFile = "images.json"

// New returns a Puller keeping its index of imported images in root and
// extracting layers into layers.
func New(root string, layers *layer.Store) (*Puller, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("create image dir %s: %w", root, err)
	}
	// Scratch files of imports a crash interrupted.
	if stale, err := filepath.Glob(filepath.Join(root, ".tmp-*")); err == nil {
		for _, f := range stale {
			os.RemoveAll(f)
		}
	}
	p := &Puller{root: root, layers: layers}
	if _, err := p.load(); err != nil {
		return nil, err
	}
	return p, nil
}

// Resolve returns the image ref names for team, extracting any layer not
// yet on disk. An image team imported with Import is served from the local
// index and never looked up in a registry; anything else (another team's
// imports included) is pulled for linux/amd64. auth may be nil for
// anonymous access; progress may be nil.
func (p *Puller) Resolve(ctx context.Context, team, ref string, auth *Auth, progress func(string)) (*Image, error) {
	if progress == nil {
		progress = func(string) {}
	}
	if img, err := p.resolveLocal(team, ref); img != nil || err != nil {
		return img, err
	}
	r, err := parseRef(ref)
	if err != nil {
		return nil, err
	}
	return p.pull(ctx, r, auth, progress)
}

// List returns the imported images of every team, sorted by ref and
// team, each with its team set.
func (p *Puller) List() ([]ImportedImage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	imgs, err := p.load()
	if err != nil {
		return nil, err
	}
	for i := range imgs {
		imgs[i].Team = store.TeamOf(imgs[i].Team)
	}
	sort.Slice(imgs, func(i, j int) bool {
		if imgs[i].Ref != imgs[j].Ref {
			return imgs[i].Ref < imgs[j].Ref
		}
		return imgs[i].Team < imgs[j].Team
	})
	return imgs, nil
}

// sameTeam reports whether rec belongs to team.
func sameTeam(rec ImportedImage, team string) bool {
	return store.TeamOf(rec.Team) == store.TeamOf(team)
}

// parseRef normalises a reference. Registries on loopback speak plain
// http in practice; go-containerregistry already allows that for
// localhost:port and 127.0.0.1, and name.Insecure extends it to the rest of
// loopback (bare "localhost", 127.0.0.0/8, ::1).
func parseRef(ref string) (name.Reference, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("invalid image reference %q: %v", ref, err))
	}
	if r.Context().Registry.Scheme() == "https" && loopback(r.Context().RegistryStr()) {
		return name.ParseReference(ref, name.Insecure)
	}
	return r, nil
}

func loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// resolveLocal serves ref from team's imported images: by the exact
// string, by its normalised form, or, for a digest reference, by digest
// (content named by digest is the same wherever it came from, but another
// team's import is not found even by its digest: it would confirm that
// the team has it).
func (p *Puller) resolveLocal(team, ref string) (*Image, error) {
	p.mu.Lock()
	imgs, err := p.load()
	p.mu.Unlock()
	if err != nil || len(imgs) == 0 {
		return nil, err
	}
	want := map[string]bool{ref: true}
	var digest string
	if r, err := name.ParseReference(ref); err == nil {
		want[r.Name()] = true
		if d, ok := r.(name.Digest); ok {
			digest = d.DigestStr()
		}
	}
	if strings.HasPrefix(ref, "sha256:") {
		digest = ref
	}
	for _, rec := range imgs {
		if sameTeam(rec, team) && (want[rec.Ref] || (digest != "" && rec.Digest == digest)) {
			return p.fromRecord(rec)
		}
	}
	return nil, nil
}

func (p *Puller) fromRecord(rec ImportedImage) (*Image, error) {
	img := &Image{Ref: rec.Ref, Digest: rec.Digest, Config: rec.Config}
	for _, key := range rec.Layers {
		if !p.layers.Has(key) {
			return nil, errdefs.New(errdefs.ErrNotFound,
				fmt.Sprintf("image %s was imported but its layer sha256:%s is gone; import it again", rec.Ref, key))
		}
		img.Layers = append(img.Layers, p.layers.Path(key))
	}
	return img, nil
}

func (p *Puller) paths(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = p.layers.Path(k)
	}
	return out
}

func convertConfig(cf *v1.ConfigFile) Config {
	if cf == nil {
		return Config{}
	}
	c := cf.Config
	out := Config{
		Env:        c.Env,
		WorkingDir: c.WorkingDir,
		User:       c.User,
		Entrypoint: c.Entrypoint,
		Cmd:        c.Cmd,
		Labels:     c.Labels,
	}
	for port := range c.ExposedPorts {
		out.ExposedPorts = append(out.ExposedPorts, port)
	}
	sort.Strings(out.ExposedPorts)
	return out
}

func (p *Puller) indexPath() string { return filepath.Join(p.root, indexFile) }
