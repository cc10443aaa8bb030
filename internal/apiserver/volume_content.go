package apiserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/volume"
)

type volumeCtx struct{}

// volumeToken guards a content route: its bearer must be the token of
// the volume the path names. On a cluster's API role only its presence is
// checked here; the node the route is relayed to checks the token, as it
// holds the volumes.
func (s *Server) volumeToken(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.starting {
			writeError(w, http.StatusServiceUnavailable, "warren is starting: try again shortly")
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			fail(w, r, errdefs.New(errdefs.ErrUnauthenticated,
				"missing volume token: send Authorization: Bearer <token>, the token POST /volumes or GET /volumes/{volumeID} returns"))
			return
		}
		if s.opts.Relay != nil {
			next(w, r)
			return
		}
		vs, err := s.volumes()
		if err != nil {
			fail(w, r, err)
			return
		}
		v, err := vs.Authorize(r.Context(), r.PathValue("volumeID"), token)
		if err != nil {
			fail(w, r, err)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), volumeCtx{}, v)))
	})
}

// authorized is the volume volumeToken let the request at.
func authorized(r *http.Request) *store.Volume {
	v, _ := r.Context().Value(volumeCtx{}).(*store.Volume)
	return v
}

func (s *Server) listVolumeDir(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	path, depth := q.path(), q.uint("depth", 1)
	if q.err == nil && depth == 0 {
		q.err = invalid("depth must be at least 1")
	}
	if q.err != nil {
		fail(w, r, q.err)
		return
	}
	entries, err := s.opts.Volumes.ListDir(r.Context(), authorized(r), path, int(depth))
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]rest.VolumeEntryStat, 0, len(entries))
	for i := range entries {
		out = append(out, entryResponse(&entries[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) makeVolumeDir(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	path, attrs, force := q.path(), q.attrs(), q.bool("force")
	if q.err != nil {
		fail(w, r, q.err)
		return
	}
	e, err := s.opts.Volumes.MakeDir(r.Context(), authorized(r), path, attrs, force)
	answerEntry(w, r, http.StatusCreated, e, err)
}

func (s *Server) statVolumePath(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	path := q.path()
	if q.err != nil {
		fail(w, r, q.err)
		return
	}
	e, err := s.opts.Volumes.Stat(r.Context(), authorized(r), path)
	answerEntry(w, r, http.StatusOK, e, err)
}

func (s *Server) updateVolumePath(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	path := q.path()
	if q.err != nil {
		fail(w, r, q.err)
		return
	}
	var body rest.VolumeMetadata
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	a := volume.Attrs{UID: body.UID, GID: body.GID, Mode: body.Mode}
	if err := checkMode(a.Mode); err != nil {
		fail(w, r, err)
		return
	}
	e, err := s.opts.Volumes.SetAttrs(r.Context(), authorized(r), path, a)
	answerEntry(w, r, http.StatusOK, e, err)
}

func (s *Server) removeVolumePath(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	path := q.path()
	if q.err != nil {
		fail(w, r, q.err)
		return
	}
	if err := s.opts.Volumes.Remove(r.Context(), authorized(r), path); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// readVolumeFile streams the file as it was when opened: its length then
// is the answer's, so a writer appending meanwhile does not make the
// answer longer than it says.
func (s *Server) readVolumeFile(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	path := q.path()
	if q.err != nil {
		fail(w, r, q.err)
		return
	}
	rc, e, err := s.opts.Volumes.Open(r.Context(), authorized(r), path)
	if err != nil {
		fail(w, r, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(e.Size, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := io.CopyN(w, rc, e.Size); err != nil && r.Context().Err() == nil {
		// Too late for an error body: the cut answer tells the client.
		log.G(r.Context()).Warn("reading a volume file", "volume", authorized(r).ID, "err", err)
	}
}

// writeVolumeFile streams the request's body into the file: nothing
// bounds it but the volume's size.
func (s *Server) writeVolumeFile(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	path, attrs, force := q.path(), q.attrs(), q.bool("force")
	if q.err != nil {
		fail(w, r, q.err)
		return
	}
	e, err := s.opts.Volumes.Write(r.Context(), authorized(r), path, r.Body, attrs, force)
	answerEntry(w, r, http.StatusCreated, e, err)
}

func answerEntry(w http.ResponseWriter, r *http.Request, status int, e volume.Entry, err error) {
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, status, entryResponse(&e))
}

func entryResponse(e *volume.Entry) rest.VolumeEntryStat {
	return rest.VolumeEntryStat{
		Name: e.Name, Type: rest.VolumeEntryStatType(e.Type), Path: e.Path, Size: e.Size,
		Mode: e.Mode, UID: e.UID, GID: e.GID,
		Atime: e.ATime.UTC(), Mtime: e.MTime.UTC(), Ctime: e.CTime.UTC(),
		Target: optional(e.Target),
	}
}

// query reads a content route's query strictly, keeping the first error.
type query struct {
	r   *http.Request
	err error
}

// one is the value of name, sent at most once; ok is false when absent.
func (q *query) one(name string) (string, bool) {
	vals, ok := q.r.URL.Query()[name]
	if !ok || q.err != nil {
		return "", false
	}
	if len(vals) > 1 {
		q.err = invalid(fmt.Sprintf("send %s once, not %d times", name, len(vals)))
		return "", false
	}
	return vals[0], true
}

// path is the required path parameter; the service cleans and confines it.
func (q *query) path() string {
	p, ok := q.one("path")
	if q.err == nil && (!ok || p == "") {
		q.err = invalid("path is required: a path in the volume, from its root")
	}
	return p
}

// uint is name as a whole number from 0 to 2^32-1, or def when absent.
func (q *query) uint(name string, def uint32) uint32 {
	s, ok := q.one(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		q.err = invalid(fmt.Sprintf("%s must be a whole number from 0 to 4294967295, got %q", name, s))
		return def
	}
	return uint32(n)
}

// optUint is name as uint does, nil when absent.
func (q *query) optUint(name string) *uint32 {
	if _, ok := q.r.URL.Query()[name]; !ok {
		return nil
	}
	n := q.uint(name, 0)
	return &n
}

func (q *query) bool(name string) bool {
	s, ok := q.one(name)
	switch {
	case !ok || s == "false":
		return false
	case s == "true":
		return true
	}
	q.err = invalid(fmt.Sprintf("%s must be true or false, got %q", name, s))
	return false
}

// attrs are the uid, gid and mode parameters of a write or a mkdir.
func (q *query) attrs() volume.Attrs {
	a := volume.Attrs{UID: q.optUint("uid"), GID: q.optUint("gid"), Mode: q.optUint("mode")}
	if q.err == nil {
		q.err = checkMode(a.Mode)
	}
	return a
}

// checkMode refuses a mode beyond the permission bits (0o7777): a file's
// type is not the client's to set.
func checkMode(mode *uint32) error {
	if mode != nil && *mode > 0o7777 {
		return invalid(fmt.Sprintf("mode %#o has bits beyond the permission bits (0o7777)", *mode))
	}
	return nil
}
