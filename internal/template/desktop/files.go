package desktop

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// rootFile is one file or symbolic link the build writes into the rootfs
// after apt, replacing what a package put there.
type rootFile struct {
	name string // relative to the rootfs
	mode fs.FileMode
	data []byte
	link string // when set, name is a symlink to it and mode and data are unused
}

// xfwm4Config turns off xfwm4's compositor: nothing needs it on a virtual
// framebuffer, and it redraws on every change, which costs idle CPU.
const xfwm4Config = `<?xml version="1.0" encoding="UTF-8"?>
<!-- warren: no compositing on Xvfb -->
<channel name="xfwm4" version="1.0">
  <property name="general" type="empty">
    <property name="use_compositing" type="bool" value="false"/>
  </property>
</channel>
`

// noBlankEntry turns off the X screensaver and DPMS when XFCE starts: Xvfb
// blanks the screen after 10 minutes otherwise, and the SDK starts it
// without -s 0.
const noBlankEntry = `[Desktop Entry]
Type=Application
Name=warren: keep the screen on
Comment=Xvfb blanks the screen after 10 minutes otherwise
Exec=xset s off -dpms
NoDisplay=true
`

// firefoxPolicies keeps Firefox from reaching for the internet on its own
// (first-run and privacy pages, studies, telemetry, update checks): a
// sandbox usually has none, and each attempt is a tab of errors on the
// screen an agent reads.
const firefoxPolicies = `{
  "policies": {
    "DisableAppUpdate": true,
    "DisableFirefoxStudies": true,
    "DisableTelemetry": true,
    "DontCheckDefaultBrowser": true,
    "NoDefaultBookmarks": true,
    "OverrideFirstRunPage": "",
    "OverridePostUpdatePage": "",
    "UserMessaging": {"WhatsNew": false, "ExtensionRecommendations": false, "FeatureRecommendations": false,
      "UrlbarInterventions": false, "SkipOnboarding": true, "MoreFromMozilla": false},
    "Preferences": {
      "browser.aboutwelcome.enabled": {"Value": false, "Status": "default"},
      "datareporting.policy.dataSubmissionPolicyBypassNotification": {"Value": true, "Status": "default"}
    }
  }
}
`

// xvfbWrapper runs ahead of /usr/bin/Xvfb on PATH. A desktop copied from a
// disk-only snapshot (every snapshot on runc) keeps the source's
// /tmp/.X<n>-lock, and the pid in it may belong to some other process of
// the copy, which Xvfb takes for a server already running: the SDK's
// create then fails with "Could not start Xvfb". The wrapper removes a lock
// whose process is not an Xvfb, then runs the real one in its place.
const xvfbWrapper = `#!/bin/sh
# warren: remove a stale X lock a snapshot carried over, then run Xvfb.
for a in "$@"; do
	case $a in :[0-9]*) d=${a#:}; break ;; esac
done
lock=/tmp/.X${d:-0}-lock
if [ -n "${d:-}" ] && [ -f "$lock" ]; then
	pid=$(tr -dc 0-9 <"$lock" 2>/dev/null)
	if [ -z "$pid" ] || [ "$pid" = $$ ] || [ "$(cat /proc/"$pid"/comm 2>/dev/null)" != Xvfb ]; then
		rm -f "$lock"
	fi
fi
exec /usr/bin/Xvfb "$@"
`

// configFiles lists every file and link the build writes, in order; the
// recipe hashes them, so editing one rebuilds the template.
var configFiles = []rootFile{
	// The SDK runs /opt/noVNC/utils/novnc_proxy with --web /opt/noVNC;
	// Debian installs noVNC under /usr/share/novnc.
	{name: "opt/noVNC", link: "/usr/share/novnc"},
	{name: "etc/xdg/xfce4/xfconf/xfce-perchannel-xml/xfwm4.xml", mode: 0o644, data: []byte(xfwm4Config)},
	{name: "etc/xdg/autostart/warren-no-blank.desktop", mode: 0o644, data: []byte(noBlankEntry)},
	{name: "usr/local/bin/Xvfb", mode: 0o755, data: []byte(xvfbWrapper)},
	// Debian's firefox-esr links its distribution directory here.
	{name: "usr/share/firefox-esr/distribution/policies.json", mode: 0o644, data: []byte(firefoxPolicies)},
}

// check rejects an entry the writer would put outside the rootfs or
// could not write.
func (f rootFile) check() error {
	if f.name == "" || path.IsAbs(f.name) || path.Clean(f.name) != f.name || strings.HasPrefix(f.name, "..") {
		return fmt.Errorf("config file %q: want a clean path relative to the rootfs", f.name)
	}
	if f.link != "" && f.data != nil {
		return fmt.Errorf("config file %q: both a link and data", f.name)
	}
	if f.link == "" && f.mode&^fs.ModePerm != 0 {
		return fmt.Errorf("config file %q: mode %v is not a plain permission", f.name, f.mode)
	}
	return nil
}

// writeConfig writes files into rootfs. A link whose target the packages
// did not install fails the build rather than leave it dangling.
func writeConfig(rootfs string, files []rootFile) error {
	r, err := os.OpenRoot(rootfs)
	if err != nil {
		return fmt.Errorf("opening rootfs: %w", err)
	}
	defer r.Close()
	for _, f := range files {
		if err := f.check(); err != nil {
			return err
		}
		if f.link == "" {
			if err := cachedfs.PutFile(r, f.name, f.data, f.mode); err != nil {
				return err
			}
			continue
		}
		target := f.link
		if !path.IsAbs(target) {
			target = path.Join("/", path.Dir(f.name), target)
		}
		if _, err := os.Lstat(filepath.Join(rootfs, target)); err != nil {
			return fmt.Errorf("/%s would point at %s: %w", f.name, f.link, errors.Join(err, fs.ErrNotExist))
		}
		if err := cachedfs.PutSymlink(r, f.name, f.link); err != nil {
			return err
		}
	}
	return nil
}
