package desktop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// ConfigVersion is the revision of how this package builds the tree (copy,
// apt, trimming). The files and links it writes are hashed by content, so
// editing them needs no bump; changing the build steps does.
const ConfigVersion = 1

// Packages is what the template installs on top of base, with apt and
// without Recommends, each for what @e2b/desktop 2.4.0 runs
// (docs/desktop.md): Xvfb and xdpyinfo (x11-utils) to start and
// probe the display; XFCE's session, window manager, desktop and panel
// (the SDK waits for xfce4-session, xfwm4 and xfdesktop by name) with
// dbus-launch, which xfce4-session needs without a session bus; xdotool,
// scrot, xrandr (x11-xserver-utils), xdg-open and gtk-launch
// (libgtk-3-bin) for its methods; x11vnc, noVNC, websockify and netstat
// (net-tools) for the stream; and a browser, terminal and editor to drive.
// Firefox ESR is the smaller of bookworm's two browsers.
var Packages = []string{
	"dbus-x11",
	// desktop-file-utils' trigger writes /usr/share/applications/
	// mimeinfo.cache; without it exo-open (what xdg-open runs under XFCE,
	// and so the SDK's open()) finds no application for a file and fails.
	"desktop-file-utils",
	"firefox-esr",
	"fonts-dejavu-core",
	"libgtk-3-bin",
	"mousepad",
	"net-tools",
	"novnc",
	"python3-websockify",
	"scrot",
	"x11-utils",
	"x11-xserver-utils",
	"x11vnc",
	"xdg-utils",
	"xdotool",
	"xfce4-panel",
	"xfce4-session",
	"xfce4-terminal",
	"xfdesktop4",
	"xfwm4",
	"xvfb",
}

// recipe is everything that decides the content of a built rootfs.
type recipe struct {
	BaseRecipe    string   // base template's recipe hash
	Packages      []string // sorted, unique
	ConfigVersion int
	Files         string // digest of every file and link writeConfig writes
}

func newRecipe(baseRecipe string, packages []string, files []rootFile) (recipe, error) {
	pkgs := slices.Clone(packages)
	slices.Sort(pkgs)
	h := sha256.New()
	for _, f := range files {
		if err := f.check(); err != nil {
			return recipe{}, err
		}
		if f.link != "" {
			fmt.Fprintf(h, "%s -> %s\n", f.name, f.link)
			continue
		}
		fmt.Fprintf(h, "%s %o %d\n", f.name, f.mode, len(f.data))
		h.Write(f.data)
	}
	return recipe{
		BaseRecipe:    baseRecipe,
		Packages:      slices.Compact(pkgs),
		ConfigVersion: ConfigVersion,
		Files:         hex.EncodeToString(h.Sum(nil)),
	}, nil
}

// hash names the recipe in the cache: 16 hex characters of a SHA-256 over
// a canonical text form.
func (r recipe) hash() string {
	text := fmt.Sprintf("base=%s\nconfig=%d\npackages=%s\nfiles=%s\n",
		r.BaseRecipe, r.ConfigVersion, strings.Join(r.Packages, ","), r.Files)
	return cachedfs.Hash(text)
}
