package image

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// indexDoc is the on-disk index of imported images. It is small (one entry
// per imported ref), so it is rewritten whole on every change.
type indexDoc struct {
	Version int             `json:"version"`
	Images  []ImportedImage `json:"images"`
}

const indexVersion = 1

// load reads the index; callers hold p.mu when they go on to save.
func (p *Puller) load() ([]ImportedImage, error) {
	b, err := os.ReadFile(p.indexPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read image index: %w", err)
	}
	var doc indexDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("image index %s is corrupt: %w", p.indexPath(), err)
	}
	if doc.Version != indexVersion {
		return nil, fmt.Errorf("image index %s has version %d, want %d", p.indexPath(), doc.Version, indexVersion)
	}
	return doc.Images, nil
}

// record adds recs to the index, replacing entries of the same team and
// ref: a team's import never replaces another team's image.
func (p *Puller) record(recs []ImportedImage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	imgs, err := p.load()
	if err != nil {
		return err
	}
	for _, rec := range recs {
		replaced := false
		for i := range imgs {
			if imgs[i].Ref == rec.Ref && sameTeam(imgs[i], rec.Team) {
				imgs[i], replaced = rec, true
			}
		}
		if !replaced {
			imgs = append(imgs, rec)
		}
	}
	b, err := json.MarshalIndent(indexDoc{Version: indexVersion, Images: imgs}, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(p.indexPath(), b)
}

// writeAtomic replaces name so that readers (and a crash) see the old or
// the new index, never half of one.
func writeAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-index-")
	if err != nil {
		return fmt.Errorf("write image index: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write image index: %w", err)
	}
	return nil
}
