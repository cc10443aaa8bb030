package apiserver

import (
	"context"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/volume"
)

// fakeVolumes is an in-memory Volumes with the service's error classes,
// for the edge's tests: each volume a map of path to file.
type fakeVolumes struct {
	mu   sync.Mutex
	vols map[string]*fakeVolume
	n    int
	// mounts are the sandboxes mounting a volume, by its id.
	mounts map[string][]string
	// limit is each volume's size in bytes.
	limit int64
	// open, when set, replaces a file's reader (Open).
	open func(data []byte) io.ReadCloser
	// written is told of each Write's first read (streaming tests).
	written func(first []byte)
}

type fakeVolume struct {
	rec   store.Volume
	files map[string]*fakeFile
}

type fakeFile struct {
	dir            bool
	data           []byte
	mode, uid, gid uint32
}

func newFakeVolumes() *fakeVolumes {
	return &fakeVolumes{vols: map[string]*fakeVolume{}, mounts: map[string][]string{}, limit: 1 << 20}
}

var fakeTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func (f *fakeVolumes) Create(_ context.Context, team, name string) (*store.Volume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range f.vols {
		if v.rec.TeamID == team && v.rec.Name == name {
			return nil, errdefs.New(errdefs.ErrAlreadyExists, "team has a volume named "+name)
		}
	}
	f.n++
	id := "vol" + string(rune('a'+f.n))
	v := &fakeVolume{
		rec:   store.Volume{ID: id, TeamID: team, Name: name, Token: "token-" + id, SizeMB: 1, CreatedAt: fakeTime},
		files: map[string]*fakeFile{"/": {dir: true, mode: 0o755}},
	}
	f.vols[id] = v
	rec := v.rec
	return &rec, nil
}

func (f *fakeVolumes) info(v *fakeVolume) volume.Info {
	used := int64(0)
	for _, file := range v.files {
		used += int64(len(file.data))
	}
	return volume.Info{Volume: v.rec, UsedBytes: used, Sandboxes: slices.Clone(f.mounts[v.rec.ID])}
}

func (f *fakeVolumes) List(_ context.Context, team string) ([]volume.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []volume.Info
	for _, id := range slices.Sorted(maps.Keys(f.vols)) {
		if v := f.vols[id]; team == "" || v.rec.TeamID == team {
			out = append(out, f.info(v))
		}
	}
	return out, nil
}

func (f *fakeVolumes) find(team, id string) (*fakeVolume, error) {
	v := f.vols[id]
	if v == nil || team != "" && v.rec.TeamID != team {
		return nil, errdefs.New(errdefs.ErrNotFound, "volume "+id+" not found")
	}
	return v, nil
}

func (f *fakeVolumes) Get(_ context.Context, team, id string) (*volume.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, err := f.find(team, id)
	if err != nil {
		return nil, err
	}
	info := f.info(v)
	return &info, nil
}

func (f *fakeVolumes) Delete(_ context.Context, team, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.find(team, id); err != nil {
		return err
	}
	if sbs := f.mounts[id]; len(sbs) > 0 {
		return errdefs.New(errdefs.ErrFailedPrecondition, "volume "+id+" is mounted by "+strings.Join(sbs, ", "))
	}
	delete(f.vols, id)
	return nil
}

func (f *fakeVolumes) Authorize(_ context.Context, id, token string) (*store.Volume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch v := f.vols[id]; {
	case token == "":
		return nil, errdefs.New(errdefs.ErrUnauthenticated, "no token")
	case v == nil:
		return nil, errdefs.New(errdefs.ErrNotFound, "volume "+id+" not found")
	case v.rec.Token != token:
		return nil, errdefs.New(errdefs.ErrPermissionDenied, "this token is not the volume's")
	default:
		rec := v.rec
		return &rec, nil
	}
}

// at returns the volume's files and p cleaned, refusing "..".
func (f *fakeVolumes) at(v *store.Volume, p string) (map[string]*fakeFile, string, error) {
	if slices.Contains(strings.Split(p, "/"), "..") {
		return nil, "", errdefs.New(errdefs.ErrInvalidArgument, "path "+p+" leaves the volume")
	}
	fv := f.vols[v.ID]
	if fv == nil {
		return nil, "", errdefs.New(errdefs.ErrNotFound, "volume gone")
	}
	return fv.files, path.Clean("/" + p), nil
}

func entryOf(p string, file *fakeFile) volume.Entry {
	e := volume.Entry{Name: path.Base(p), Type: volume.TypeFile, Path: p, Size: int64(len(file.data)),
		Mode: file.mode, UID: file.uid, GID: file.gid, ATime: fakeTime, MTime: fakeTime, CTime: fakeTime}
	if file.dir {
		e.Type = volume.TypeDirectory
	}
	return e
}

func notFound(p string) error { return errdefs.New(errdefs.ErrNotFound, "no such path: "+p) }

func (f *fakeVolumes) ListDir(_ context.Context, v *store.Volume, p string, depth int) ([]volume.Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	files, p, err := f.at(v, p)
	if err != nil {
		return nil, err
	}
	if d := files[p]; d == nil || !d.dir {
		return nil, notFound(p)
	}
	var out []volume.Entry
	for _, q := range slices.Sorted(maps.Keys(files)) {
		rel, ok := strings.CutPrefix(q, strings.TrimSuffix(p, "/")+"/")
		if ok && q != p && strings.Count(rel, "/") < depth {
			out = append(out, entryOf(q, files[q]))
		}
	}
	return out, nil
}

func setAttrs(file *fakeFile, a volume.Attrs) {
	if a.UID != nil {
		file.uid = *a.UID
	}
	if a.GID != nil {
		file.gid = *a.GID
	}
	if a.Mode != nil {
		file.mode = *a.Mode
	}
}

func (f *fakeVolumes) MakeDir(_ context.Context, v *store.Volume, p string, a volume.Attrs, force bool) (volume.Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	files, p, err := f.at(v, p)
	if err != nil {
		return volume.Entry{}, err
	}
	if d := files[p]; d != nil {
		if !force || !d.dir {
			return volume.Entry{}, errdefs.New(errdefs.ErrAlreadyExists, p+" exists")
		}
		return entryOf(p, d), nil
	}
	if parent := files[path.Dir(p)]; parent == nil && !force {
		return volume.Entry{}, notFound(path.Dir(p))
	}
	for q := p; files[q] == nil; q = path.Dir(q) {
		files[q] = &fakeFile{dir: true, mode: 0o755}
	}
	setAttrs(files[p], a)
	return entryOf(p, files[p]), nil
}

func (f *fakeVolumes) Stat(_ context.Context, v *store.Volume, p string) (volume.Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	files, p, err := f.at(v, p)
	if err != nil {
		return volume.Entry{}, err
	}
	if files[p] == nil {
		return volume.Entry{}, notFound(p)
	}
	return entryOf(p, files[p]), nil
}

func (f *fakeVolumes) SetAttrs(_ context.Context, v *store.Volume, p string, a volume.Attrs) (volume.Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	files, p, err := f.at(v, p)
	if err != nil {
		return volume.Entry{}, err
	}
	if files[p] == nil {
		return volume.Entry{}, notFound(p)
	}
	setAttrs(files[p], a)
	return entryOf(p, files[p]), nil
}

func (f *fakeVolumes) Remove(_ context.Context, v *store.Volume, p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	files, p, err := f.at(v, p)
	switch {
	case err != nil:
		return err
	case p == "/":
		return errdefs.New(errdefs.ErrInvalidArgument, "the root cannot be removed")
	case files[p] == nil:
		return notFound(p)
	}
	for q := range files {
		if q == p || strings.HasPrefix(q, p+"/") {
			delete(files, q)
		}
	}
	return nil
}

func (f *fakeVolumes) Open(_ context.Context, v *store.Volume, p string) (io.ReadCloser, volume.Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	files, p, err := f.at(v, p)
	switch {
	case err != nil:
		return nil, volume.Entry{}, err
	case files[p] == nil:
		return nil, volume.Entry{}, notFound(p)
	case files[p].dir:
		return nil, volume.Entry{}, errdefs.New(errdefs.ErrInvalidArgument, p+" is a directory")
	}
	data := slices.Clone(files[p].data)
	if f.open != nil {
		return f.open(data), entryOf(p, files[p]), nil
	}
	return io.NopCloser(strings.NewReader(string(data))), entryOf(p, files[p]), nil
}

func (f *fakeVolumes) Write(_ context.Context, v *store.Volume, p string, r io.Reader, a volume.Attrs, force bool) (volume.Entry, error) {
	f.mu.Lock()
	files, p, err := f.at(v, p)
	if err == nil {
		err = f.writable(files, p, force)
	}
	written, limit := f.written, f.limit
	f.mu.Unlock()
	if err != nil {
		return volume.Entry{}, err
	}
	// Read unlocked, as the service streams: the body may be slow.
	var data []byte
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if len(data) == 0 && n > 0 && written != nil {
			written(buf[:n])
		}
		data = append(data, buf[:n]...)
		if int64(len(data)) > limit {
			return volume.Entry{}, errdefs.New(errdefs.ErrNoSpace, "the volume is full")
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return volume.Entry{}, errdefs.New(errdefs.ErrInvalidArgument, "reading the body: "+err.Error())
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	file := &fakeFile{data: data, mode: 0o644}
	setAttrs(file, a)
	files[p] = file
	return entryOf(p, file), nil
}

func (f *fakeVolumes) writable(files map[string]*fakeFile, p string, force bool) error {
	switch parent, file := files[path.Dir(p)], files[p]; {
	case parent == nil || !parent.dir:
		return notFound(path.Dir(p))
	case file != nil && file.dir:
		return errdefs.New(errdefs.ErrConflict, p+" is a directory")
	case file != nil && !force:
		return errdefs.New(errdefs.ErrAlreadyExists, p+" exists")
	}
	return nil
}
