package server

import (
	"context"
	"net/netip"
	"path/filepath"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/netguard"
	"github.com/warren-sandbox/warren/internal/template/builder"
	"github.com/warren-sandbox/warren/internal/template/image"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// imagesDir holds pulled and imported images: their layers (a layer store
// of their own, which the build layer collector never touches) and the
// index of imported refs.
func imagesDir(cfg *Config) string { return filepath.Join(cfg.DataDir, "images") }

// openImages opens the image store of a data dir over its layer store
// (nodeLayers.images). One process opens it once: opening clears
// unfinished work.
func openImages(cfg *Config, layers *layer.Store) (*image.Puller, error) {
	p, err := image.New(imagesDir(cfg), layers)
	if err != nil {
		return nil, err
	}
	// No layer of an image may hold more than a sandbox's disk could.
	p.LayerLimit = layerLimit(cfg)
	// A user's image reference must not make the server reach the host's
	// own services or the sandboxes.
	var deny []netip.Prefix
	if sub, err := netip.ParsePrefix(cfg.Subnet); err == nil {
		deny = append(deny, sub)
	}
	p.Dial = (&netguard.Guard{Allow: cfg.RegistryAllow, Deny: deny}).DialContext
	return p, nil
}

// imageResolver adapts image.Puller to builder.Images.
type imageResolver struct{ p *image.Puller }

func (r imageResolver) Resolve(ctx context.Context, team, ref string, auth *wire.RegistryAuth, progress func(string)) (*builder.BaseImage, error) {
	a, err := imageAuth(auth)
	if err != nil {
		return nil, err
	}
	img, err := r.p.Resolve(ctx, team, ref, a, progress)
	if err != nil {
		return nil, err
	}
	c := img.Config
	return &builder.BaseImage{
		Digest: img.Digest, Layers: img.Layers, Env: c.Env, WorkingDir: c.WorkingDir,
		User: c.User, Entrypoint: c.Entrypoint, Cmd: c.Cmd,
	}, nil
}

// imageAuth turns a build's registry credentials into a registry login.
func imageAuth(auth *wire.RegistryAuth) (*image.Auth, error) {
	switch {
	case auth == nil:
		return nil, nil
	case auth.Type == wire.AuthGCP:
		return image.GCPAuth(auth.ServiceAccountJSON)
	case auth.Type == wire.AuthAWS:
		return &image.Auth{AWS: &image.AWSKeys{AccessKeyID: auth.AWSAccessKeyID, SecretAccessKey: auth.AWSSecretAccessKey, Region: auth.AWSRegion}}, nil
	case auth.Username != "" || auth.Password != "":
		return &image.Auth{Username: auth.Username, Password: auth.Password}, nil
	}
	return nil, nil
}
