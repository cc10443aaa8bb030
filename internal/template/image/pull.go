package image

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// pullJobs is how many layers download and extract at once.
const pullJobs = 3

func (p *Puller) pull(ctx context.Context, r name.Reference, auth *Auth, progress func(string)) (*Image, error) {
	ref := r.Name()
	withAuth := auth.set()
	fail := func(err error) error { return classify(ctx, err, ref, withAuth) }
	if withAuth && auth.AWS != nil {
		progress(fmt.Sprintf("logging in to ECR in %s", auth.AWS.Region))
		login, err := p.ecrAuth(ctx, auth.AWS)
		if err != nil {
			return nil, fmt.Errorf("pull %s: %w", ref, err)
		}
		auth = login
	}

	progress(fmt.Sprintf("resolving %s", ref))
	desc, err := remote.Get(r, p.remoteOptions(ctx, auth)...)
	if err != nil {
		return nil, fail(err)
	}
	var img v1.Image
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, fail(err)
		}
		img, err = pickPlatform(idx, ref)
		if err != nil {
			return nil, fail(err)
		}
	} else if img, err = desc.Image(); err != nil {
		return nil, fail(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fail(err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fail(err)
	}
	keys, err := p.unpack(ctx, layers, progress, unpackOptions{verb: "pulling", sizes: true, jobs: pullJobs})
	if err != nil {
		return nil, fail(err)
	}
	log.G(ctx).Info("image pulled", "ref", ref, "digest", desc.Digest.String(), "layers", len(keys))
	return &Image{Ref: ref, Digest: desc.Digest.String(), Layers: p.paths(keys), Config: convertConfig(cfg)}, nil
}

func (p *Puller) remoteOptions(ctx context.Context, auth *Auth) []remote.Option {
	// Never the host's docker keychain: a sandbox user must not pull with
	// the server operator's credentials.
	var a authn.Authenticator = authn.Anonymous
	if auth.set() {
		a = &authn.Basic{Username: auth.Username, Password: auth.Password}
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuth(a),
		remote.WithPlatform(platform),
		remote.WithUserAgent("warren"),
	}
	if rt := p.roundTripper(); rt != nil {
		opts = append(opts, remote.WithTransport(rt))
	}
	if p.backoff != nil {
		opts = append(opts, remote.WithRetryBackoff(*p.backoff))
	}
	return opts
}

// classify gives registry failures the error class the API reports.
// Errors that already carry a class (a rejected layer, a full disk) keep it.
func classify(ctx context.Context, err error, ref string, withAuth bool) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	if classed(err) {
		return err
	}
	log.G(ctx).Debug("registry error", "ref", ref, "err", err)
	var terr *transport.Error
	if errors.As(err, &terr) {
		switch {
		case terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden ||
			hasCode(terr, transport.UnauthorizedErrorCode, transport.DeniedErrorCode):
			if withAuth {
				return errdefs.New(errdefs.ErrPermissionDenied, fmt.Sprintf("registry refused the credentials for %s", ref))
			}
			return errdefs.New(errdefs.ErrPermissionDenied,
				fmt.Sprintf("registry denied access to %s: it may not exist, or it needs credentials", ref))
		case terr.StatusCode == http.StatusNotFound ||
			hasCode(terr, transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode):
			return errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("image %s not found", ref))
		case terr.StatusCode == http.StatusTooManyRequests || terr.StatusCode >= 500:
			return errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("registry for %s is unavailable: %v", ref, err))
		}
	}
	if ne := net.Error(nil); errors.As(err, &ne) {
		return errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("cannot reach the registry for %s: %v", ref, err))
	}
	return fmt.Errorf("pull %s: %w", ref, err)
}

func hasCode(terr *transport.Error, codes ...transport.ErrorCode) bool {
	for _, d := range terr.Errors {
		for _, c := range codes {
			if d.Code == c {
				return true
			}
		}
	}
	return false
}

var classes = []error{
	errdefs.ErrNotFound, errdefs.ErrAlreadyExists, errdefs.ErrInvalidArgument, errdefs.ErrFailedPrecondition,
	errdefs.ErrConflict, errdefs.ErrResourceExhausted, errdefs.ErrUnavailable, errdefs.ErrUnauthenticated,
	errdefs.ErrPermissionDenied, errdefs.ErrNoSpace, errdefs.ErrNotImplemented,
}

func classed(err error) bool {
	for _, c := range classes {
		if errors.Is(err, c) {
			return true
		}
	}
	return false
}

// shortDigest is how progress lines name a layer: "sha256:0123456789ab…".
func shortDigest(h v1.Hash) string {
	hex := h.Hex
	if len(hex) > 12 {
		hex = hex[:12] + "…"
	}
	return h.Algorithm + ":" + hex
}

func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n)/unit, 0
	for f >= unit && i < 3 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", f, []string{"KiB", "MiB", "GiB", "TiB"}[i])
}

// pickPlatform chooses the image sandboxes can run from a multi-platform
// index. An index whose only image carries no platform is taken as is.
func pickPlatform(idx v1.ImageIndex, ref string) (v1.Image, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var images []v1.Descriptor
	for _, d := range im.Manifests {
		if !d.MediaType.IsImage() {
			continue
		}
		if d.Platform != nil && d.Platform.OS == platform.OS && d.Platform.Architecture == platform.Architecture {
			return idx.Image(d.Digest)
		}
		images = append(images, d)
	}
	if len(images) == 1 && images[0].Platform == nil {
		return idx.Image(images[0].Digest)
	}
	return nil, errdefs.New(errdefs.ErrNotFound,
		fmt.Sprintf("image %s has no %s/%s variant", ref, platform.OS, platform.Architecture))
}
