package apiserver

import (
	"github.com/warren-sandbox/warren/internal/wire"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// clientID is a deprecated required field of E2B's Sandbox; any constant does.
const clientID = "warren"

func (s *Server) sandboxResponse(sb *store.Sandbox) wire.Sandbox {
	out := wire.Sandbox{
		TemplateID:      sb.TemplateID,
		SandboxID:       sb.ID,
		ClientID:        clientID,
		EnvdVersion:     sandbox.EnvdVersion,
		Alias:           sb.Alias,
		EnvdAccessToken: sb.EnvdAccessToken,
		Domain:          s.domain(),
	}
	if sb.TrafficAccessToken != "" {
		t := sb.TrafficAccessToken
		out.TrafficAccessToken = &t
	}
	return out
}

func (s *Server) detailResponse(sb *store.Sandbox, full bool) wire.SandboxDetail {
	md := sb.Metadata
	if md == nil {
		md = map[string]string{}
	}
	out := wire.SandboxDetail{
		TemplateID:  sb.TemplateID,
		SandboxID:   sb.ID,
		ClientID:    clientID,
		EnvdVersion: sandbox.EnvdVersion,
		Alias:       sb.Alias,
		StartedAt:   sb.StartedAt.UTC(),
		EndAt:       sb.EndAt.UTC(),
		CPUCount:    sb.CPUCount,
		MemoryMB:    sb.MemoryMB,
		DiskSizeMB:  sb.DiskMB,
		State:       sb.State,
		Metadata:    md,
	}
	if full {
		allow := sb.Network.AllowInternet
		onTimeout := "kill"
		if sb.AutoPause {
			onTimeout = "pause"
		}
		out.EnvdAccessToken = sb.EnvdAccessToken
		out.Domain = s.domain()
		out.AllowInternetAccess = &allow
		out.Lifecycle = &wire.Lifecycle{AutoResume: sb.AutoResume, OnTimeout: onTimeout}
		out.Network = renderNetwork(sb.Network)
	}
	return out
}

func (s *Server) domain() *string {
	if s.opts.Domain == "" {
		return nil
	}
	d := s.opts.Domain
	return &d
}
