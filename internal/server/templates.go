package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/base"
	"github.com/warren-sandbox/warren/internal/template/codeinterp"
	"github.com/warren-sandbox/warren/internal/template/desktop"
)

// CodeInterpreterID is the template the code-interpreter SDKs create by
// default.
const codeInterpreterID = "code-interpreter-v1"

// interpreterTarget is where the interpreter server's binary appears inside
// every sandbox; the code-interpreter template's start command runs it.
const interpreterTarget = codeinterp.InterpreterPath

// interpreterStartCmd runs the interpreter server. envd starts it as the
// template's user (`user`, whom commands run as too), and it goes to root
// through sudo, as upstream runs Jupyter as root: kernels run as root (a
// context may work in /root, and what they write belongs to root), in
// /home/user. The template's sudoers drop-in keeps the environment a
// template built on this one sets (ENV) as it is.
var interpreterStartCmd = "exec sudo -n HOME=/root USER=root LOGNAME=root " +
	interpreterTarget + " --port " + strconv.Itoa(wire.InterpreterPort) + " --kernels /etc/warren/kernels.json --cwd /home/user"

// ensureTemplates builds (or finds cached) every default template and
// records it in the store.
func ensureTemplates(ctx context.Context, cfg *Config, st store.Store) error {
	fmt.Fprintln(os.Stderr, "warren: preparing templates (the first run builds them from Debian packages; this takes a few minutes)")
	rootfs, err := base.Ensure(ctx, base.Options{CacheDir: cfg.CacheDir, Progress: os.Stderr})
	if err != nil {
		return fmt.Errorf("building the base template: %w", err)
	}
	if err := putTemplate(ctx, st, &store.Template{ID: "base", Aliases: []string{"base"}, RootfsPath: rootfs}); err != nil {
		return err
	}
	if cfg.CodeInterpreter {
		if err := ensureCodeInterpreter(ctx, cfg, st); err != nil {
			return err
		}
	}
	if cfg.Desktop {
		return ensureDesktop(ctx, cfg, st)
	}
	return nil
}

func ensureCodeInterpreter(ctx context.Context, cfg *Config, st store.Store) error {
	if _, err := os.Stat(cfg.InterpreterPath); err != nil {
		return fmt.Errorf("code interpreter server: %w (build it with 'make build', or pass --code-interpreter=false)", err)
	}
	rootfs, err := codeinterp.Ensure(ctx, codeinterp.Options{CacheDir: cfg.CacheDir, Progress: os.Stderr})
	if err != nil {
		return fmt.Errorf("building the %s template: %w", codeInterpreterID, err)
	}
	return putTemplate(ctx, st, &store.Template{
		ID: codeInterpreterID, Aliases: []string{codeInterpreterID}, RootfsPath: rootfs,
		StartCmd: interpreterStartCmd, ReadyPort: 49999, MemoryMB: 1024,
		User: "user", Workdir: "/home/user",
	})
}

// ensureDesktop builds (or finds) the desktop template. It has no start
// command: the SDK starts Xvfb at the size it asks for, and an X server
// already on :0 would answer its probe at the wrong size.
func ensureDesktop(ctx context.Context, cfg *Config, st store.Store) error {
	rootfs, err := desktop.Ensure(ctx, desktop.Options{CacheDir: cfg.CacheDir, Progress: os.Stderr})
	if err != nil {
		return fmt.Errorf("building the %s template: %w", desktop.TemplateID, err)
	}
	return putTemplate(ctx, st, &store.Template{
		ID: desktop.TemplateID, Aliases: []string{desktop.TemplateID}, RootfsPath: rootfs,
		MemoryMB: 2048, CPUCount: 2, User: "user", Workdir: "/home/user",
	})
}

// templateHints tells a create of a built-in template this server was
// started without how to get it.
func templateHints(cfg *Config) map[string]string {
	hints := map[string]string{}
	if !cfg.Desktop {
		hints[desktop.TemplateID] = "start warren with --desktop to build and serve it"
	}
	return hints
}

func putTemplate(ctx context.Context, st store.Store, t *store.Template) error {
	now := time.Now().UTC()
	t.EnvdVersion, t.Public, t.CreatedAt, t.UpdatedAt = sandbox.EnvdVersion, true, now, now
	t.BuildID = filepath.Base(filepath.Dir(t.RootfsPath))
	if old, err := st.GetTemplate(ctx, t.ID); err == nil {
		t.CreatedAt = old.CreatedAt
	}
	if err := st.PutTemplate(ctx, t); err != nil {
		return fmt.Errorf("recording template %s: %w", t.ID, err)
	}
	return nil
}
