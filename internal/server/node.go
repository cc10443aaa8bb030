package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/park"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// heartbeat keeps a node's record in the shared store: its capacity, what
// its sandboxes reserve and the templates it has cached, rewritten every
// interval. The record's HeartbeatAt is what tells the cluster the node
// is alive, so a beat that fails is logged and the next one tries again.
type heartbeat struct {
	st       store.Store
	self     store.Node // name, address, version and start time
	interval time.Duration
	// deadAfter is the cluster's --node-dead-after.
	deadAfter time.Duration
	census    func() []sandbox.Live
	// cached says a template's layers are all on this node; nil: its
	// rootfs directory exists.
	cached   func(*store.Template) bool
	capacity func() (cpus int, memoryMB, diskMB int64, err error)
	now      func() time.Time
	// dataDir is where this node keeps its snapshots.
	dataDir string
	// dropLost destroys the sandboxes the cluster reported lost while
	// this node was silent (lifecycle.Manager.DropLost).
	dropLost func(context.Context) (int, error)
	// takeOver takes over the parked sandboxes the cluster handed to
	// this node (park.Room.TakeOverParked).
	takeOver func(context.Context) (int, error)
	// settling: a settle is running; the next beat does not start another.
	settling atomic.Bool
}

// newHeartbeat is the heartbeat of the node cfg describes; cached tells
// which templates it has (nodeLayers.cached).
func newHeartbeat(cfg *Config, st store.Store, mgr *machine, cached func(*store.Template) bool) *heartbeat {
	return &heartbeat{
		st: st,
		self: store.Node{Name: cfg.NodeName, AdvertiseURL: cfg.AdvertiseURL, Version: cfg.Version,
			ShareID: cfg.ShareID, StartedAt: time.Now().UTC()},
		interval:  cfg.HeartbeatInterval,
		deadAfter: cfg.NodeDeadAfter,
		census:    mgr.Census,
		cached:    cached,
		capacity:  func() (int, int64, int64, error) { return hostCapacity(cfg.DataDir) },
		now:       time.Now,
		dataDir:   cfg.DataDir,
		dropLost:  mgr.DropLost,
		takeOver:  mgr.takeOverParked,
	}
}

// run beats at once, so the node is listed as soon as it serves, and then
// every interval until ctx ends.
func (h *heartbeat) run(ctx context.Context) {
	ctx = log.With(ctx, "node", h.self.Name)
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		if err := h.beatWithin(ctx); err != nil && ctx.Err() == nil {
			log.G(ctx).Warn("node heartbeat", "err", err)
		} else if err == nil && h.settling.CompareAndSwap(false, true) {
			// Off the beat: settling waits for sandboxes busy with a
			// long resume and rebuilds taken-over ones, and a beat that
			// waited for that would get the node taken for dead.
			go func() {
				defer h.settling.Store(false)
				h.settle(ctx)
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// beatTimeout bounds one beat: a store behind a partition drops packets,
// and a beat waiting on it (until TCP retransmits, which backs off to
// minutes) would keep the next ones from trying over a new connection
// once the link is back. A third of --node-dead-after leaves room for
// two more attempts before the API takes the node for dead.
func (h *heartbeat) beatTimeout() time.Duration {
	if h.deadAfter <= 0 {
		return 2 * h.interval
	}
	return max(h.interval, h.deadAfter/3)
}

// dropTimeout bounds one round of destroying lost sandboxes for the same
// reason; it may destroy many, so it is given much longer. (Take-overs
// bound themselves.)
const dropTimeout = 10 * time.Minute

func (h *heartbeat) beatWithin(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, h.beatTimeout())
	defer cancel()
	return h.beat(ctx)
}

// settle brings this node in line with what the cluster decided while
// it was not looking: lost sandboxes destroyed, handed ones taken over.
func (h *heartbeat) settle(ctx context.Context) {
	if h.dropLost != nil {
		dctx, cancel := context.WithTimeout(ctx, dropTimeout)
		_, err := h.dropLost(dctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				log.G(ctx).Warn("destroying sandboxes the cluster reported lost", "err", err)
			}
			return // not sure what is still this node's: take nothing over
		}
	}
	if h.takeOver != nil {
		if _, err := h.takeOver(ctx); err != nil && ctx.Err() == nil {
			log.G(ctx).Warn("taking over parked sandboxes", "err", err)
		}
	}
}

// beat writes the node's record once.
func (h *heartbeat) beat(ctx context.Context) error {
	n := h.self
	var err error
	if n.CPUs, n.MemoryMB, n.DiskMB, err = h.capacity(); err != nil {
		return fmt.Errorf("reading the host's capacity: %w", err)
	}
	for _, l := range h.census() {
		if l.Running {
			n.Sandboxes++
			n.ReservedCPUs += l.CPUCount
			n.ReservedMemoryMB += int64(l.MemoryMB)
		}
	}
	if n.Templates, err = cachedTemplates(ctx, h.st, h.cached); err != nil {
		return err
	}
	snaps, err := localSnapshots(ctx, h.st, h.dataDir)
	if err != nil {
		return err
	}
	n.Templates = append(n.Templates, snaps...)
	n.HeartbeatAt = h.now().UTC()
	if err := h.st.PutNode(ctx, &n); err != nil {
		return fmt.Errorf("writing the node's record: %w", err)
	}
	return nil
}

// cachedTemplates lists the templates a create here starts without
// fetching anything: those cached says are here (on a node, every layer
// in its own stores, by key: the recorded paths may name another node's
// directory, even one on this machine), or, with cached nil, those whose
// rootfs is on this host.
func cachedTemplates(ctx context.Context, st store.Store, cached func(*store.Template) bool) ([]string, error) {
	tpls, err := st.ListTemplates(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing templates: %w", err)
	}
	if cached == nil {
		cached = rootfsHere
	}
	var out []string
	for _, t := range tpls {
		if t.RootfsPath != "" && cached(t) {
			out = append(out, t.ID)
		}
	}
	return out, nil
}

// localSnapshots lists the snapshots whose files are in this node's data
// dir: a create from one must come here, so the API role places it by
// this list. (A path under the data dir that exists: on one test machine
// every node sees the others' dirs, and in a cluster every node's data
// dir has the same path.)
func localSnapshots(ctx context.Context, st store.Store, dataDir string) ([]string, error) {
	snaps, err := st.ListSnapshots(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	root := filepath.Clean(dataDir) + string(filepath.Separator)
	var out []string
	for _, s := range snaps {
		if !strings.HasPrefix(filepath.Clean(s.Dir), root) {
			continue
		}
		if _, err := os.Stat(s.Dir); err == nil {
			out = append(out, s.ID)
		}
	}
	return out, nil
}

func rootfsHere(t *store.Template) bool {
	_, err := os.Stat(t.RootfsPath)
	return err == nil
}

// hostCapacity is the machine's CPUs, memory and the data dir's disk.
func hostCapacity(dataDir string) (cpus int, memoryMB, diskMB int64, err error) {
	mem, err := lifecycle.MemTotalMB()
	if err != nil {
		return 0, 0, 0, err
	}
	disk, err := lifecycle.DiskSizeMB(dataDir)
	if err != nil {
		return 0, 0, 0, err
	}
	return goruntime.NumCPU(), int64(mem), int64(disk), nil
}

// parkOptions configure the parking room of a node with shared storage;
// nil: this server parks nothing.
func parkOptions(cfg *Config, st store.Store, evs sandbox.EventRecorder) *park.Options {
	if !cfg.IsNode() || cfg.SharedDir == "" {
		return nil
	}
	return &park.Options{Store: st, SharedDir: cfg.SharedDir, SnapshotDir: snapshotDir(cfg),
		NodeName: nodeName(cfg), Events: evs}
}

// snapshotDir is where the manager keeps snapshots: beside the
// sandboxes' state dirs, on the same filesystem, so a snapshot moves a
// writable layer instead of copying it.
func snapshotDir(cfg *Config) string { return filepath.Join(cfg.DataDir, "snapshots") }

// nodeName is the name the manager stamps on its sandboxes: the node's in
// a cluster, "" for the one-machine server (whose hostname may change
// without orphaning anything).
func nodeName(cfg *Config) string {
	if cfg.IsNode() {
		return cfg.NodeName
	}
	return ""
}
