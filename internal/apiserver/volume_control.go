package apiserver

import (
	"net/http"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/volume"
)

// errNoVolumes answers the volume routes of a server built without a
// volume service.
var errNoVolumes = errdefs.New(errdefs.ErrNotImplemented,
	"volumes are not available on this server: it was started without volume storage "+
		"(a cluster node needs --shared-dir, which every node mounts)")

// volumes is the volume service, or errNoVolumes.
func (s *Server) volumes() (Volumes, error) {
	if s.opts.Volumes == nil {
		return nil, errNoVolumes
	}
	return s.opts.Volumes, nil
}

// volumeTeam is the team whose volumes the request sees: "" (every team)
// for the admin key.
func volumeTeam(r *http.Request) string {
	if isAdmin(r) {
		return ""
	}
	return teamOf(r)
}

func (s *Server) listVolumes(w http.ResponseWriter, r *http.Request) {
	vs, err := s.volumes()
	if err != nil {
		fail(w, r, err)
		return
	}
	infos, err := vs.List(r.Context(), volumeTeam(r))
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]rest.Volume, 0, len(infos))
	for i := range infos {
		out = append(out, volumeResponse(&infos[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createVolume(w http.ResponseWriter, r *http.Request) {
	vs, err := s.volumes()
	if err != nil {
		fail(w, r, err)
		return
	}
	var body rest.NewVolume
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	if !volume.ValidName(body.Name) {
		fail(w, r, invalid("name must be 1 to 63 letters, digits, '_' or '-'"))
		return
	}
	v, err := vs.Create(r.Context(), teamOf(r), body.Name)
	if err != nil {
		fail(w, r, err)
		return
	}
	// A new volume is empty and mounted nowhere: no need to ask again.
	writeJSON(w, http.StatusCreated, volumeAndToken(&volume.Info{Volume: *v, Sandboxes: []string{}}))
}

func (s *Server) getVolume(w http.ResponseWriter, r *http.Request) {
	vs, err := s.volumes()
	if err != nil {
		fail(w, r, err)
		return
	}
	info, err := vs.Get(r.Context(), volumeTeam(r), r.PathValue("volumeID"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, volumeAndToken(info))
}

func (s *Server) deleteVolume(w http.ResponseWriter, r *http.Request) {
	vs, err := s.volumes()
	if err != nil {
		fail(w, r, err)
		return
	}
	if err := vs.Delete(r.Context(), volumeTeam(r), r.PathValue("volumeID")); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// volumeResponse is E2B's Volume with warren's fields.
func volumeResponse(in *volume.Info) rest.Volume {
	created := in.CreatedAt.UTC()
	size, used := in.SizeMB, in.UsedBytes
	sandboxes := in.Sandboxes
	if sandboxes == nil {
		sandboxes = []string{}
	}
	return rest.Volume{
		VolumeID: in.ID, Name: in.Name,
		CreatedAt: &created, SizeMB: &size, UsedBytes: &used, Sandboxes: &sandboxes,
	}
}

func volumeAndToken(in *volume.Info) rest.VolumeAndToken {
	v := volumeResponse(in)
	return rest.VolumeAndToken{
		VolumeID: v.VolumeID, Name: v.Name, Token: in.Token,
		CreatedAt: v.CreatedAt, SizeMB: v.SizeMB, UsedBytes: v.UsedBytes, Sandboxes: v.Sandboxes,
	}
}
