package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// partMaxAge: a parked directory still being written or removed after
// this long was left by a node that died meanwhile.
const partMaxAge = time.Hour

// TakeOverParked takes over the parked sandboxes the cluster handed to
// this node (store.MoveSandbox) that it does not hold yet, and removes
// parked directories nobody needs any more. The heartbeat calls it after
// every beat; a request for such a sandbox takes it over at once
// (getOrTakeOver). It returns how many it took over.
func (m *Manager) TakeOverParked(ctx context.Context) (int, error) {
	if m.opts.SharedDir == "" || m.opts.NodeName == "" {
		return 0, nil
	}
	records, err := m.opts.Store.ListSandboxesOnNode(ctx, m.opts.NodeName)
	if err != nil {
		return 0, fmt.Errorf("listing this node's sandboxes: %w", err)
	}
	taken := 0
	for _, sb := range records {
		if !sb.Parked || sb.State != store.SandboxPaused {
			continue
		}
		if _, err := m.get(sb.ID); err == nil {
			continue
		}
		if err := m.takeOver(ctx, sb.ID); err != nil {
			log.G(ctx).Warn("taking over a parked sandbox", "sandbox", sb.ID, "err", err)
			continue
		}
		taken++
	}
	m.collectParked(ctx)
	return taken, nil
}

// getOrTakeOver is get, which, for a sandbox this node does not hold
// but the cluster handed to it, takes the sandbox over first.
func (m *Manager) getOrTakeOver(ctx context.Context, id string) (*entry, error) {
	e, err := m.get(id)
	if err == nil || m.opts.SharedDir == "" {
		return e, err
	}
	if terr := m.takeOver(ctx, id); terr != nil {
		if errdefs.IsNotFound(terr) {
			return nil, err
		}
		return nil, terr
	}
	return m.get(id)
}

// takeOver rebuilds sandbox id, parked by another node and handed to
// this one, from its parked directory: created stopped, with its memory
// image when it has one, and adopted paused as it was. The directory and
// the Parked flag stay until the sandbox is resumed, so should this node
// die too, the next one can take it over again. ErrNotFound when the
// record is not a parked sandbox of this node's.
func (m *Manager) takeOver(ctx context.Context, id string) error {
	m.takeMu.Lock()
	defer m.takeMu.Unlock()
	if _, err := m.get(id); err == nil {
		return nil
	}
	sb, err := m.opts.Store.GetSandbox(ctx, id)
	if err != nil {
		return err
	}
	if sb.Node != m.opts.NodeName || !sb.Parked || sb.State != store.SandboxPaused {
		return errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id))
	}
	backend, ok := m.opts.Backends[sb.Backend]
	if !ok {
		return errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("sandbox %q was parked on runtime %s, which node %s does not run", id, sb.Backend, m.opts.NodeName))
	}
	start := time.Now()
	dir := m.parkedPath(id)
	man, err := readManifest(dir, id)
	if err != nil {
		return err
	}
	m.snapMu.RLock() // until the instance stands on the unpacked layers
	defer m.snapMu.RUnlock()
	spec, err := m.takeOverSpec(ctx, sb, man, dir, backend)
	if err != nil {
		return err
	}
	inst, err := backend.Create(ctx, spec)
	if err != nil {
		return fmt.Errorf("rebuilding parked sandbox %s: %w", id, err)
	}
	sb.IP = inst.IP.String()
	if err := m.opts.Store.UpdateSandbox(ctx, sb); err != nil {
		m.destroy(context.WithoutCancel(ctx), backend, id)
		return fmt.Errorf("recording parked sandbox %s here: %w", id, err)
	}
	m.adopt(ctx, &entry{sb: sb, ip: inst.IP, backend: backend, conns: newConnSet()}, inst)
	log.G(ctx).Info("took over a sandbox parked by another node", "sandbox", id, "parked_by", man.Node,
		"memory", man.Memory, "took", time.Since(start))
	return nil
}

// takeOverSpec is the spec that rebuilds sb from its parked directory
// dir: its own layers unpacked into this node's snapshot dir, over the
// template's layers, which this node has or pulls by key.
func (m *Manager) takeOverSpec(ctx context.Context, sb *store.Sandbox, man *manifest, dir string, backend runtime.Backend) (runtime.Spec, error) {
	base, err := m.localTemplate(ctx, &store.Template{ID: sb.TemplateID, Layers: man.TemplateLayers})
	if err != nil {
		return runtime.Spec{}, err
	}
	own, err := m.unpackParked(ctx, dir, man)
	if err != nil {
		return runtime.Spec{}, err
	}
	tpl, err := m.opts.Store.GetTemplate(ctx, sb.TemplateID)
	if err != nil {
		// Deleted since: its layers are named above, and envd's start
		// command is the one thing a cold boot misses.
		tpl = &store.Template{ID: sb.TemplateID}
	}
	spec := m.spec(sb, tpl)
	m.guardArgs(&spec, backend)
	layers := append(own, base.Layers...)
	spec.Rootfs = layers[len(layers)-1]
	spec.From = &runtime.Snapshot{Dir: dir, Layers: layers, Memory: man.Memory}
	spec.Stopped = true
	return spec, nil
}

// unpackParked extracts the parked layer tars into new directories of
// this node's snapshot dir (each as a snapshot's layer, which the
// collector keeps while a sandbox stands on it) and returns them, top
// first. The tars are the sandbox's files: extracted with every check
// hostile archives get.
func (m *Manager) unpackParked(ctx context.Context, dir string, man *manifest) ([]string, error) {
	if m.opts.SnapshotDir == "" {
		return nil, errdefs.New(errdefs.ErrNotImplemented, "this node keeps no snapshots, so it cannot take over parked sandboxes")
	}
	out := make([]string, man.Layers)
	for i := range man.Layers {
		name := runtime.ExportLayer
		if i > 0 {
			name = fmt.Sprintf("layer-%d.tar", i)
		}
		l := filepath.Join(m.opts.SnapshotDir, "snap"+newID()[:16], "layer")
		if err := os.MkdirAll(l, 0o700); err != nil {
			return nil, err
		}
		if err := extractFile(ctx, filepath.Join(dir, name), l); err != nil {
			return nil, fmt.Errorf("unpacking parked layer %s: %w", name, err)
		}
		out[i] = l
	}
	return out, nil
}

func extractFile(ctx context.Context, tarPath, dst string) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()
	return layer.Extract(ctx, f, dst, layer.Options{Whiteouts: true, MaxEntries: layer.ImageMaxEntries})
}

// readManifest reads and checks the manifest of sandbox id's parked
// directory dir.
func readManifest(dir, id string) (*manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, parkManifest))
	if err != nil {
		return nil, fmt.Errorf("reading the parked state of sandbox %s: %w", id, err)
	}
	var man manifest
	if err := json.Unmarshal(data, &man); err != nil {
		return nil, fmt.Errorf("the parked state of sandbox %s is damaged: %w", id, err)
	}
	if man.ID != id || man.Layers < 1 || man.Layers+len(man.TemplateLayers) > overlay.MaxLayers {
		return nil, fmt.Errorf("the parked state of sandbox %s is damaged: it names sandbox %q with %d layers over %d", id, man.ID, man.Layers, len(man.TemplateLayers))
	}
	return &man, nil
}

// collectParked removes parked directories that nothing will read: those
// of sandboxes that are gone, those this node's sandboxes no longer need
// (resumed, or never recorded parked), and what a node that died while
// writing or removing one left.
func (m *Manager) collectParked(ctx context.Context) {
	root := filepath.Join(m.opts.SharedDir, parkedDir)
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, de := range entries {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			if fi, err := de.Info(); err == nil && time.Since(fi.ModTime()) > partMaxAge {
				_ = os.RemoveAll(filepath.Join(root, name))
			}
			continue
		}
		if e, err := m.get(name); err == nil {
			e.mu.Lock()
			if !e.sb.Parked && !e.killed {
				m.removeParked(name)
			}
			e.mu.Unlock()
			continue
		}
		if _, err := m.opts.Store.GetSandbox(ctx, name); errdefs.IsNotFound(err) {
			m.removeParked(name)
		}
	}
}
