package apiserver

import (
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// clientID is a deprecated required field of E2B's Sandbox; any constant does.
const clientID = "warren"

func (s *Server) sandboxResponse(sb *store.Sandbox) rest.Sandbox {
	return rest.Sandbox{
		TemplateID:         sb.TemplateID,
		SandboxID:          sb.ID,
		ClientID:           clientID,
		EnvdVersion:        sandbox.EnvdVersion,
		Alias:              optional(sb.Alias),
		EnvdAccessToken:    optional(sb.EnvdAccessToken),
		TrafficAccessToken: optional(sb.TrafficAccessToken),
		Domain:             s.domain(),
	}
}

func (s *Server) detailResponse(sb *store.Sandbox, full bool) rest.SandboxDetail {
	md := sb.Metadata
	if md == nil {
		md = map[string]string{}
	}
	out := rest.SandboxDetail{
		TemplateID:  sb.TemplateID,
		SandboxID:   sb.ID,
		ClientID:    clientID,
		EnvdVersion: sandbox.EnvdVersion,
		Alias:       optional(sb.Alias),
		StartedAt:   sb.StartedAt.UTC(),
		EndAt:       shownEnd(sb),
		CPUCount:    sb.CPUCount,
		MemoryMB:    sb.MemoryMB,
		DiskSizeMB:  sb.DiskMB,
		State:       rest.SandboxDetailState(sb.State),
		Metadata:    md,
		// The SDK reads [] for none, as E2B sends.
		VolumeMounts: mountsResponse(sb.VolumeMounts),
	}
	if full {
		allow := sb.Network.AllowInternet
		onTimeout := rest.SandboxLifecycleOnTimeoutKill
		if sb.AutoPause {
			onTimeout = rest.SandboxLifecycleOnTimeoutPause
		}
		out.EnvdAccessToken = optional(sb.EnvdAccessToken)
		out.Domain = s.domain()
		out.AllowInternetAccess = &allow
		out.Lifecycle = &rest.SandboxLifecycle{AutoResume: sb.AutoResume, OnTimeout: onTimeout}
		out.Network = renderNetwork(sb.Network)
	}
	return out
}

// shownEnd is a sandbox's endAt: when it ends, or for a paused one, which
// does not end while paused, when it paused, as E2B shows it. What it had
// left is kept for its resume (sandbox.resumeLifetime).
func shownEnd(sb *store.Sandbox) time.Time {
	if sb.State == store.SandboxPaused && !sb.PausedAt.IsZero() {
		return sb.PausedAt.UTC()
	}
	return sb.EndAt.UTC()
}

func (s *Server) domain() *string { return optional(s.opts.Domain) }

// optional is v for a field the API leaves out when empty.
func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// deref is an optional value of the API, or its zero value (nil for a
// list or a map).
func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}
