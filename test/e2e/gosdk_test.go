package e2e

import (
	"errors"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestGoSDK drives a real server with the Go SDK (pkg/warren): create
// with metadata, env vars and a timeout, info, list by metadata, a new
// timeout, pause and connect (which resumes), kill, and the errors it
// classifies afterwards.
func TestGoSDK(t *testing.T) {
	cfg := loadConfig(t)
	rt := cfg.runtimes[len(cfg.runtimes)-1]
	s := launchServer(t, cfg, serverOpts{index: 122, runtime: rt})
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 2 * time.Minute,
		Metadata: map[string]string{"sdk": "go"}, EnvVars: map[string]string{"GREETING": "hi"}})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	info, err := sb.Info(ctx)
	if err != nil || info.ID != sb.ID || info.State != "running" || info.Metadata["sdk"] != "go" || time.Until(info.EndAt) > 2*time.Minute+5*time.Second {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	list, _, err := c.List(ctx, warren.ListOptions{Metadata: map[string]string{"sdk": "go"}})
	if err != nil || len(list) != 1 || list[0].ID != sb.ID {
		t.Fatalf("List by metadata = %+v, %v", list, err)
	}
	if list, _, err := c.List(ctx, warren.ListOptions{Metadata: map[string]string{"sdk": "python"}}); err != nil || len(list) != 0 {
		t.Fatalf("List by other metadata = %+v, %v", list, err)
	}
	t.Run("envd", func(t *testing.T) { goSDKEnvd(t, sb) })
	t.Run("ops", func(t *testing.T) { goSDKOps(t, c, sb) })
	if err := sb.SetTimeout(ctx, 10*time.Minute); err != nil {
		t.Fatalf("SetTimeout: %v", err)
	}
	if err := c.Pause(ctx, sb.ID, true); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if info, err := c.Info(ctx, sb.ID); err != nil || info.State != "paused" {
		t.Fatalf("after Pause: %+v, %v", info, err)
	}
	again, err := c.Connect(ctx, sb.ID, time.Minute)
	if err != nil || again.ID != sb.ID {
		t.Fatalf("Connect: %+v, %v", again, err)
	}
	if info, err := c.Info(ctx, sb.ID); err != nil || info.State != "running" {
		t.Fatalf("after Connect: %+v, %v", info, err)
	}
	if err := sb.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if _, err := c.Info(ctx, sb.ID); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("Info after Kill = %v, want ErrNotFound", err)
	}
	if _, err := c.Create(ctx, "no-such-template", warren.CreateOptions{}); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("Create from a missing template = %v, want ErrNotFound", err)
	}
	bad, _ := warren.New(warren.Config{APIURL: s.url, APIKey: "e2b_" + "0000000000000000000000000000000000000000"})
	if _, _, err := bad.List(ctx, warren.ListOptions{}); !errors.Is(err, warren.ErrUnauthorized) {
		t.Errorf("a wrong key = %v, want ErrUnauthorized", err)
	}
}
