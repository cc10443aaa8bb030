package network

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/warren-sandbox/warren/internal/log"
)

// Sweep removes what earlier runs leaked on this manager's bridge: netns
// files with this manager's prefix, and bridge ports, that belong to no
// attached or reserved sandbox. Call it once every backend sharing the
// manager has re-adopted its sandboxes (Reserve); it returns what it
// removed. Tests call it to prove nothing leaked. It must not run
// concurrently with Attach.
func (m *Manager) Sweep(ctx context.Context) ([]string, error) {
	m.mu.Lock()
	keepNetns, keepLinks := map[string]bool{}, map[string]bool{}
	for id, a := range m.attached {
		keepNetns[m.NetnsPath(id)] = true
		if a != nil {
			keepLinks[a.HostVeth] = true
		} else {
			keepLinks[m.HostVeth(id)] = true // being attached right now
		}
	}
	m.mu.Unlock()

	var removed []string
	var errs []error
	files, _ := filepath.Glob(filepath.Join(m.opts.NetnsDir, m.opts.NetnsPrefix+"*"))
	for _, f := range files {
		if keepNetns[f] {
			continue
		}
		if err := deleteNetns(f); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "netns "+f)
	}
	links, err := netlink.LinkList()
	if err != nil {
		return removed, errors.Join(append(errs, err)...)
	}
	for _, l := range links {
		name := l.Attrs().Name
		if l.Attrs().MasterIndex != m.bridgeIdx || keepLinks[name] || !strings.HasPrefix(name, "wv") {
			continue
		}
		if err := netlink.LinkDel(l); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "link "+name)
	}
	if len(removed) > 0 {
		log.G(ctx).Warn("removed leaked network state", "removed", removed)
	}
	return removed, errors.Join(errs...)
}
