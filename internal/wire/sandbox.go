package wire

import (
	"encoding/json"
	"time"
)

// The sandbox API's shapes (E2B's OpenAPI names in the comments), shared by
// warren's server and its Go clients.

// Image is an imported image (warren: GET /images).
type Image struct {
	Ref      string    `json:"ref"`
	Digest   string    `json:"digest"`
	Layers   int       `json:"layers"`
	Size     int64     `json:"sizeBytes"`
	Imported time.Time `json:"importedAt"`
}

// Sandbox is E2B's Sandbox (create, connect).
type Sandbox struct {
	TemplateID         string  `json:"templateID"`
	SandboxID          string  `json:"sandboxID"`
	ClientID           string  `json:"clientID"`
	EnvdVersion        string  `json:"envdVersion"`
	Alias              string  `json:"alias,omitempty"`
	EnvdAccessToken    string  `json:"envdAccessToken,omitempty"`
	TrafficAccessToken *string `json:"trafficAccessToken"`
	Domain             *string `json:"domain"`
}

// Lifecycle is SandboxDetail's lifecycle: what a timeout does.
type Lifecycle struct {
	AutoResume bool   `json:"autoResume"`
	OnTimeout  string `json:"onTimeout"`
}

// SandboxDetail is E2B's SandboxDetail and, with the same required fields,
// ListedSandbox.
type SandboxDetail struct {
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
	Lifecycle           *Lifecycle        `json:"lifecycle,omitempty"`
}

// SandboxNetwork is E2B's SandboxNetworkConfig (create) and
// SandboxNetworkUpdateConfig (PUT /sandboxes/{id}/network). The API
// server turns it into a netpolicy.Policy (internal/apiserver's
// network_json.go) and renders the sandbox info's from one.
type SandboxNetwork struct {
	AllowOut           []string        `json:"allowOut,omitempty"`
	DenyOut            []string        `json:"denyOut,omitempty"`
	AllowPublicTraffic *bool           `json:"allowPublicTraffic,omitempty"`
	MaskRequestHost    *string         `json:"maskRequestHost,omitempty"`
	EgressProxy        json.RawMessage `json:"egressProxy,omitempty"`
	Rules              json.RawMessage `json:"rules,omitempty"`
	HTTPSPorts         []int           `json:"httpsPorts,omitempty"`
}

// NewSandbox is E2B's NewSandbox (v1) and NewSandboxV2 (no `secure`).
type NewSandbox struct {
	TemplateID          *string           `json:"templateID"`
	Timeout             *int64            `json:"timeout"`
	AutoPause           *bool             `json:"autoPause"`
	AutoPauseMemory     *bool             `json:"autoPauseMemory"`
	AutoResume          *AutoResume       `json:"autoResume"`
	Secure              *bool             `json:"secure"`
	AllowInternetAccess *bool             `json:"allow_internet_access"`
	Network             json.RawMessage   `json:"network"`
	Metadata            map[string]string `json:"metadata"`
	EnvVars             map[string]string `json:"envVars"`
	// warren's extension: per-sandbox resources, within the server's
	// maximums (E2B sets them per template only).
	CPUCount *int `json:"cpuCount"`
	MemoryMB *int `json:"memoryMB"`
}

// ForkResult is one entry of the fork response: exactly one field set.
type ForkResult struct {
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	Error   *Error   `json:"error,omitempty"`
}

// Error is E2B's error body.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// SandboxLog is E2B's SandboxLogEntry; fields is required.
type SandboxLog struct {
	Timestamp time.Time         `json:"timestamp"`
	Level     string            `json:"level"`
	Message   string            `json:"message"`
	Fields    map[string]string `json:"fields"`
}

// SandboxLogLine is E2B's deprecated SandboxLog: the line as written.
type SandboxLogLine struct {
	Timestamp time.Time `json:"timestamp"`
	Line      string    `json:"line"`
}

// SandboxMetric is E2B's SandboxMetric; every key is required by the PY SDK.
type SandboxMetric struct {
	Timestamp     time.Time `json:"timestamp"`
	TimestampUnix int64     `json:"timestampUnix"`
	CPUCount      int       `json:"cpuCount"`
	CPUUsedPct    float64   `json:"cpuUsedPct"`
	MemUsed       uint64    `json:"memUsed"`
	MemTotal      uint64    `json:"memTotal"`
	MemCache      uint64    `json:"memCache"`
	DiskUsed      uint64    `json:"diskUsed"`
	DiskTotal     uint64    `json:"diskTotal"`
}

// SnapshotInfo is SnapshotInfo (spec §2.3): both fields required.
type SnapshotInfo struct {
	SnapshotID string   `json:"snapshotID"`
	Names      []string `json:"names"`
}

// AutoResume is NewSandbox's autoResume.
type AutoResume struct {
	Enabled bool `json:"enabled"`
}

// TeamAPIKey is E2B's TeamAPIKey (GET /api-keys), the secret masked.
type TeamAPIKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Mask      KeyMask    `json:"mask"`
	CreatedAt time.Time  `json:"createdAt"`
	CreatedBy *TeamUser  `json:"createdBy"`
	LastUsed  *time.Time `json:"lastUsed"`
	// warren's extensions: the key's team, scopes (empty: all) and expiry.
	Team      string     `json:"team"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// CreatedTeamAPIKey answers POST /api-keys: the one time the secret is
// shown.
type CreatedTeamAPIKey struct {
	TeamAPIKey
	Key string `json:"key"`
}

// KeyMask is E2B's IdentifierMaskingDetails.
type KeyMask struct {
	Prefix            string `json:"prefix"`
	ValueLength       int    `json:"valueLength"`
	MaskedValuePrefix string `json:"maskedValuePrefix"`
	MaskedValueSuffix string `json:"maskedValueSuffix"`
}

// NewTeamAPIKey is the body of POST /api-keys; Scopes and TTLSeconds are
// warren's (a key may only hand out scopes it has itself).
type NewTeamAPIKey struct {
	Name string `json:"name"`
	// Team is honoured for the admin key only, which makes keys for any
	// team (a team is made when first named).
	Team       string   `json:"team,omitempty"`
	Scopes     []string `json:"scopes,omitempty"`
	TTLSeconds int64    `json:"ttlSeconds,omitempty"`
}

// UpdateTeamAPIKey is the body of PATCH /api-keys/{apiKeyID}.
type UpdateTeamAPIKey struct {
	Name string `json:"name"`
}
