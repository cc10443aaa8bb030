package apiserver

import (
	"encoding/json"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// clientID is a deprecated required field of E2B's Sandbox; any constant does.
const clientID = "warren"

// sandboxJSON is E2B's Sandbox (create, connect).
type sandboxJSON struct {
	TemplateID         string  `json:"templateID"`
	SandboxID          string  `json:"sandboxID"`
	ClientID           string  `json:"clientID"`
	EnvdVersion        string  `json:"envdVersion"`
	Alias              string  `json:"alias,omitempty"`
	EnvdAccessToken    string  `json:"envdAccessToken,omitempty"`
	TrafficAccessToken *string `json:"trafficAccessToken"`
	Domain             *string `json:"domain"`
}

type lifecycleJSON struct {
	AutoResume bool   `json:"autoResume"`
	OnTimeout  string `json:"onTimeout"`
}

// detailJSON is E2B's SandboxDetail and, with the same required fields,
// ListedSandbox.
type detailJSON struct {
	TemplateID          string            `json:"templateID"`
	SandboxID           string            `json:"sandboxID"`
	ClientID            string            `json:"clientID"`
	EnvdVersion         string            `json:"envdVersion"`
	Alias               string            `json:"alias,omitempty"`
	StartedAt           time.Time         `json:"startedAt"`
	EndAt               time.Time         `json:"endAt"`
	CPUCount            int               `json:"cpuCount"`
	MemoryMB            int               `json:"memoryMB"`
	DiskSizeMB          int               `json:"diskSizeMB"`
	State               string            `json:"state"`
	Metadata            map[string]string `json:"metadata"`
	EnvdAccessToken     string            `json:"envdAccessToken,omitempty"`
	Domain              *string           `json:"domain,omitempty"`
	AllowInternetAccess *bool             `json:"allowInternetAccess,omitempty"`
	Network             json.RawMessage   `json:"network,omitempty"`
	Lifecycle           *lifecycleJSON    `json:"lifecycle,omitempty"`
}

func (s *Server) sandboxResponse(sb *store.Sandbox) sandboxJSON {
	out := sandboxJSON{
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

func (s *Server) detailResponse(sb *store.Sandbox, full bool) detailJSON {
	md := sb.Metadata
	if md == nil {
		md = map[string]string{}
	}
	out := detailJSON{
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
		out.Lifecycle = &lifecycleJSON{AutoResume: sb.AutoResume, OnTimeout: onTimeout}
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
