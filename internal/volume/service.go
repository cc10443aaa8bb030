package volume

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// Store is what the service needs of the store: volume records, the
// sandboxes (which mount which volume) and the teams (their quota).
type Store interface {
	CreateVolume(ctx context.Context, v *store.Volume) error
	GetVolume(ctx context.Context, id string) (*store.Volume, error)
	GetVolumeByName(ctx context.Context, teamID, name string) (*store.Volume, error)
	ListVolumes(ctx context.Context, teamID string) ([]*store.Volume, error)
	DeleteVolume(ctx context.Context, id string) error
	ListSandboxes(ctx context.Context) ([]*store.Sandbox, error)
	GetTeam(ctx context.Context, id string) (*store.Team, error)
}

// DefaultSizeMB is a volume's size when the server sets none.
const DefaultSizeMB = 1024

// Options are what a Service is made of.
type Options struct {
	Store   Store
	Backend Backend
	// DefaultSizeMB is every new volume's size (--volume-size-mb);
	// 0 is DefaultSizeMB.
	DefaultSizeMB int
	// TeamMaxMB caps the sum of a team's volume sizes unless its own
	// MaxVolumeMB says otherwise; 0 is no cap.
	TeamMaxMB int
}

// Service is the volumes of every team: the records in the store and
// their data on the backend.
type Service struct {
	o Options
	// createMu makes a team's quota check and the record one step in
	// this process.
	createMu sync.Mutex
}

// New makes the service.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Backend == nil {
		return nil, errors.New("volume service: a store and a backend are required")
	}
	if o.DefaultSizeMB < 0 || o.TeamMaxMB < 0 {
		return nil, errors.New("volume service: sizes cannot be negative")
	}
	if o.DefaultSizeMB == 0 {
		o.DefaultSizeMB = DefaultSizeMB
	}
	return &Service{o: o}, nil
}

// namePattern is E2B's rule for volume names.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,63}$`)

// ValidName reports whether name follows E2B's rule for volume names.
func ValidName(name string) bool { return namePattern.MatchString(name) }

// Create records a volume for the team and makes its data; the record
// goes first (it holds the name) and is removed if the backend fails.
func (s *Service) Create(ctx context.Context, team, name string) (*store.Volume, error) {
	if !namePattern.MatchString(name) {
		return nil, errdefs.New(errdefs.ErrInvalidArgument,
			fmt.Sprintf("invalid volume name %q: 1 to 63 letters, digits, '_' or '-'", name))
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	if _, err := s.o.Store.GetVolumeByName(ctx, team, name); err == nil {
		return nil, errdefs.New(errdefs.ErrAlreadyExists, fmt.Sprintf("the team already has a volume named %q", name))
	} else if !errors.Is(err, errdefs.ErrNotFound) {
		return nil, err
	}
	if err := s.checkQuota(ctx, team, s.o.DefaultSizeMB); err != nil {
		return nil, err
	}
	v := &store.Volume{ID: newID(), TeamID: team, Name: name, Token: newToken(),
		SizeMB: s.o.DefaultSizeMB, CreatedAt: time.Now().UTC()}
	if err := s.o.Store.CreateVolume(ctx, v); err != nil {
		return nil, err
	}
	if err := s.o.Backend.Create(ctx, v.ID, v.SizeMB); err != nil {
		if derr := s.o.Store.DeleteVolume(context.WithoutCancel(ctx), v.ID); derr != nil {
			return nil, errors.Join(err, fmt.Errorf("removing the record of volume %s: %w", v.ID, derr))
		}
		return nil, err
	}
	return v, nil
}

// checkQuota refuses a volume of sizeMB that would take the team past
// its total.
func (s *Service) checkQuota(ctx context.Context, team string, sizeMB int) error {
	limit := s.o.TeamMaxMB
	t, err := s.o.Store.GetTeam(ctx, team)
	switch {
	case err == nil && t.MaxVolumeMB == store.Unlimited:
		return nil
	case err == nil && t.MaxVolumeMB > 0:
		limit = t.MaxVolumeMB
	case err != nil && !errors.Is(err, errdefs.ErrNotFound):
		return err
	}
	if limit <= 0 {
		return nil
	}
	vols, err := s.o.Store.ListVolumes(ctx, team)
	if err != nil {
		return err
	}
	total := sizeMB
	for _, v := range vols {
		total += v.SizeMB
	}
	if total > limit {
		return errdefs.New(errdefs.ErrQuotaExceeded, fmt.Sprintf(
			"the team's volumes would take %d MB, past its limit of %d MB: delete a volume first", total, limit))
	}
	return nil
}

// List lists the team's volumes ("" every team's).
func (s *Service) List(ctx context.Context, team string) ([]Info, error) {
	vols, err := s.o.Store.ListVolumes(ctx, team)
	if err != nil {
		return nil, err
	}
	users, err := s.mounters(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(vols))
	for _, v := range vols {
		out = append(out, s.info(ctx, v, users))
	}
	return out, nil
}

// Get returns one of the team's volumes; another team's is ErrNotFound.
func (s *Service) Get(ctx context.Context, team, id string) (*Info, error) {
	v, err := s.get(ctx, team, id)
	if err != nil {
		return nil, err
	}
	users, err := s.mounters(ctx)
	if err != nil {
		return nil, err
	}
	info := s.info(ctx, v, users)
	return &info, nil
}

func (s *Service) get(ctx context.Context, team, id string) (*store.Volume, error) {
	v, err := s.o.Store.GetVolume(ctx, id)
	if err == nil && team != "" && v.TeamID != team {
		err = errdefs.ErrNotFound
	}
	if errors.Is(err, errdefs.ErrNotFound) {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("volume %s not found", id))
	}
	return v, err
}

// info adds the usage and the sandboxes to a record. A backend that
// cannot measure the volume leaves UsedBytes 0 rather than failing a
// whole list for one volume.
func (s *Service) info(ctx context.Context, v *store.Volume, users map[string][]string) Info {
	info := Info{Volume: *v, Sandboxes: users[v.ID]}
	if info.Sandboxes == nil {
		info.Sandboxes = []string{}
	}
	if used, _, err := s.o.Backend.Usage(ctx, v.ID); err == nil {
		info.UsedBytes = used
	}
	return info
}

// mounters maps each volume id to the running or paused sandboxes that
// mount it, in id order.
func (s *Service) mounters(ctx context.Context) (map[string][]string, error) {
	sbs, err := s.o.Store.ListSandboxes(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, sb := range sbs {
		if sb.State != store.SandboxRunning && sb.State != store.SandboxPaused {
			continue
		}
		for _, m := range sb.VolumeMounts {
			if !slices.Contains(out[m.VolumeID], sb.ID) {
				out[m.VolumeID] = append(out[m.VolumeID], sb.ID)
			}
		}
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out, nil
}

// Delete removes the record (revoking the token) and then the data,
// unless a running or paused sandbox mounts the volume.
func (s *Service) Delete(ctx context.Context, team, id string) error {
	v, err := s.get(ctx, team, id)
	if err != nil {
		return err
	}
	users, err := s.mounters(ctx)
	if err != nil {
		return err
	}
	if sbs := users[v.ID]; len(sbs) > 0 {
		return errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf(
			"volume %s is mounted by sandbox(es) %s: kill them first", v.Name, strings.Join(sbs, ", ")))
	}
	if err := s.o.Store.DeleteVolume(ctx, v.ID); err != nil {
		return err
	}
	return s.o.Backend.Delete(context.WithoutCancel(ctx), v.ID)
}

// Authorize checks a content API token against the volume's.
func (s *Service) Authorize(ctx context.Context, id, token string) (*store.Volume, error) {
	if token == "" {
		return nil, errdefs.New(errdefs.ErrUnauthenticated, "the volume's token is required as the bearer")
	}
	v, err := s.get(ctx, "", id)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(v.Token)) != 1 {
		return nil, errdefs.New(errdefs.ErrPermissionDenied, "the token is not this volume's")
	}
	return v, nil
}

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newID is "vol_" and 20 base32 characters (100 random bits).
func newID() string {
	var b [13]byte
	_, _ = rand.Read(b[:])
	return "vol_" + strings.ToLower(idEncoding.EncodeToString(b[:]))[:20]
}

// newToken is 32 random bytes, base64url.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
