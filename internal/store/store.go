// Package store defines warren's persistent records and the Store interface
// that keeps them. The default implementation is SQLite in the data directory
// (store/sqlite); store/postgres serves several processes sharing one
// database. storetest is the suite both pass; the layers above test on real
// SQLite files (store/sqlite/sqlitetest).
package store

import (
	"context"
	"time"

	"github.com/warren-sandbox/warren/internal/netpolicy"
)

// Store keeps sandboxes, templates and API keys. Lookups of a missing record
// return an error wrapping errdefs.ErrNotFound; creating a record whose id
// exists returns one wrapping errdefs.ErrAlreadyExists.
type Store interface {
	CreateSandbox(ctx context.Context, s *Sandbox) error
	GetSandbox(ctx context.Context, id string) (*Sandbox, error)
	// UpdateSandbox replaces the stored record with s, matched by s.ID and
	// s.Node: a record another node holds now (MoveSandbox) is not
	// changed, and the error wraps ErrNotFound, as for a missing record.
	// So a node that was taken for dead cannot overwrite a sandbox the
	// cluster handed to another node.
	UpdateSandbox(ctx context.Context, s *Sandbox) error
	DeleteSandbox(ctx context.Context, id string) error
	// ListSandboxes returns all sandboxes, newest StartedAt first.
	ListSandboxes(ctx context.Context) ([]*Sandbox, error)

	// PutTemplate creates or replaces a template (matched by ID).
	PutTemplate(ctx context.Context, t *Template) error
	// GetTemplate finds a template by id or by one of its aliases.
	GetTemplate(ctx context.Context, idOrAlias string) (*Template, error)
	ListTemplates(ctx context.Context) ([]*Template, error)
	// DeleteTemplate removes the template with its aliases, builds and tags.
	DeleteTemplate(ctx context.Context, id string) error

	// CreateBuild records a new build of a template (which must exist).
	CreateBuild(ctx context.Context, b *Build) error
	GetBuild(ctx context.Context, id string) (*Build, error)
	// UpdateBuild replaces the stored build with b (matched by b.ID).
	UpdateBuild(ctx context.Context, b *Build) error
	// ListBuilds returns the builds of templateID (all when ""), newest first.
	ListBuilds(ctx context.Context, templateID string) ([]*Build, error)

	// SetTag points tag of templateID at buildID, creating or moving it.
	SetTag(ctx context.Context, templateID, tag, buildID string) error
	// DeleteTag removes a tag; ErrNotFound when it does not exist.
	DeleteTag(ctx context.Context, templateID, tag string) error
	// ListTags returns templateID's tags ordered by tag.
	ListTags(ctx context.Context, templateID string) ([]*Tag, error)

	// CreateSnapshot stores a new snapshot. A name another snapshot has
	// moves to this one, as a tag does: a name means "the latest".
	CreateSnapshot(ctx context.Context, s *Snapshot) error
	// GetSnapshot finds a snapshot by id or by one of its names.
	GetSnapshot(ctx context.Context, idOrName string) (*Snapshot, error)
	// ListSnapshots returns all snapshots, newest first.
	ListSnapshots(ctx context.Context) ([]*Snapshot, error)
	DeleteSnapshot(ctx context.Context, id string) error

	CreateAPIKey(ctx context.Context, k *APIKey) error
	// GetAPIKeyByHash finds a key that is not revoked by the hash of its secret.
	GetAPIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	ListAPIKeys(ctx context.Context) ([]*APIKey, error)
	// RevokeAPIKey marks the key with this id (or name) revoked.
	RevokeAPIKey(ctx context.Context, idOrName string) error
	// RenameAPIKey changes the name of the key with this id.
	RenameAPIKey(ctx context.Context, id, name string) error

	// GetTeam returns a team's quota settings; ErrNotFound for a team
	// never set, which has the server's defaults.
	GetTeam(ctx context.Context, id string) (*Team, error)
	// PutTeam creates or replaces a team's settings.
	PutTeam(ctx context.Context, t *Team) error
	// ListTeams lists the teams with settings, by id.
	ListTeams(ctx context.Context) ([]*Team, error)

	UsageStore

	Events

	Nodes

	IdempotencyKeys

	Volumes

	Close() error
}

// Volumes keeps the records of teams' volumes (their data is the volume
// package's). It is part of Store.
type Volumes interface {
	// CreateVolume stores v; ErrAlreadyExists when its id is taken or its
	// team has a volume of that name.
	CreateVolume(ctx context.Context, v *Volume) error
	GetVolume(ctx context.Context, id string) (*Volume, error)
	GetVolumeByName(ctx context.Context, teamID, name string) (*Volume, error)
	// ListVolumes returns teamID's volumes ("" = every team's), ordered by
	// team, then name.
	ListVolumes(ctx context.Context, teamID string) ([]*Volume, error)
	// DeleteVolume removes the record; ErrNotFound when there is none.
	DeleteVolume(ctx context.Context, id string) error
}

// Sandbox states kept in the store.
const (
	SandboxRunning = "running"
	SandboxPaused  = "paused"
)

// Sandbox is one sandbox as the API knows it.
type Sandbox struct {
	ID                 string
	TemplateID         string
	Alias              string // template alias the sandbox was created from, if any
	Backend            string // runtime backend name
	State              string // SandboxRunning | SandboxPaused
	EnvdAccessToken    string // empty when created with secure:false
	TrafficAccessToken string
	Metadata           map[string]string
	EnvVars            map[string]string
	CPUCount           int
	MemoryMB           int
	DiskMB             int
	IP                 string // address on the host bridge
	StartedAt          time.Time
	EndAt              time.Time
	AutoPause          bool             // on timeout: pause instead of kill
	AutoPauseNoMemory  bool             // ...and keep only the disk (autoPauseMemory: false)
	AutoResume         bool             // traffic to a paused sandbox resumes it
	Network            netpolicy.Policy // with the internet switch
	APIKeyID           string           // the key that created it
	TeamID             string           // the team of that key
	PausedAt           time.Time        // when it was paused; zero while running
	// Intent is the lifecycle operation under way (Intent*), recorded
	// before it acts: after a crash the restarted server finishes or
	// undoes it instead of guessing from what it finds.
	Intent string
	// Node is the cluster node that runs the sandbox; "" in one-machine
	// mode. A node re-adopts, times out and reaps only its own.
	Node string
	// Parked: paused, with a copy of its state on the cluster's shared
	// storage (<shared dir>/parked/<id>) from which another node sharing
	// it can take the sandbox over if its own node dies.
	Parked bool
	// VolumeMounts are the team's volumes mounted in the sandbox, kept so
	// that a resume, a re-adopt after a restart or a take-over mounts
	// them again.
	VolumeMounts []VolumeMount
}

// Sandbox intents: what a sandbox was in the middle of.
const (
	IntentPausing      = "pausing"
	IntentResuming     = "resuming"
	IntentSnapshotting = "snapshotting"
	IntentKilling      = "killing"
)

// Template is a sandbox image: a read-only rootfs plus default resources.
// The fields from RootfsPath on are those of its latest ready build.
type Template struct {
	ID         string
	Aliases    []string
	Backend    string // default runtime backend for sandboxes from it; "" = server default
	RootfsPath string // unpacked rootfs directory (the bottom layer)
	// Layers, when set, is the whole read-only stack, top first, ending
	// with RootfsPath; empty means RootfsPath alone.
	Layers      []string
	Env         map[string]string // environment of every process (ENV)
	Workdir     string            // default working directory ("" = the user's home)
	User        string            // default user of commands ("" = "user")
	ReadyCmd    string            // shell check that must pass before create returns
	Labels      map[string]string
	CPUCount    int
	MemoryMB    int
	DiskMB      int
	EnvdVersion string
	StartCmd    string
	// ReadyPort, when set, is a port the start command listens on: create
	// returns once it accepts connections.
	ReadyPort int
	BuildID   string
	Public    bool   // visible to every team (the built-in templates)
	TeamID    string // the team that owns it
	CreatedAt time.Time
	UpdatedAt time.Time
	SizeBytes int64
}

// Build states, as the SDK's build status reports them.
const (
	BuildWaiting  = "waiting"
	BuildBuilding = "building"
	BuildReady    = "ready"
	BuildError    = "error"
)

// Build is one build of a template. Once ready, its result fields describe
// the rootfs and defaults of sandboxes made from it (through a tag, or as
// the template's latest).
type Build struct {
	ID         string
	TemplateID string
	Status     string // BuildWaiting | BuildBuilding | BuildReady | BuildError
	Reason     string // why it failed
	ReasonStep string // the failing step: "base", a step number, or "finalize"
	Request    []byte // the build request JSON as received
	Tags       []string
	CreatedAt  time.Time
	FinishedAt time.Time // zero while it runs

	// Result, set when ready.
	Layers    []string // top first
	Env       map[string]string
	Workdir   string
	User      string
	StartCmd  string
	ReadyCmd  string
	Labels    map[string]string
	CPUCount  int
	MemoryMB  int
	SizeBytes int64
}

// Tag names one build of a template ("name:tag").
type Tag struct {
	TemplateID string
	Tag        string
	BuildID    string
	CreatedAt  time.Time
}

// APIKey is a hashed API key. The secret itself is never stored.
type APIKey struct {
	ID     string
	Name   string
	Hash   string // hex sha256 of the full key
	Mask   string // e.g. "e2b_ab12…9f0e", safe to show
	Admin  bool   // acts on every team
	TeamID string // the team whose resources it makes and sees
	// Scopes limit what the key may do (see docs/security.md); empty
	// means everything.
	Scopes    []string
	CreatedAt time.Time
	ExpiresAt *time.Time // nil: never
	RevokedAt *time.Time
}

// Team holds a team's quota. Each limit: 0 takes the server's default,
// Unlimited lifts it, a positive value is the limit.
type Team struct {
	ID           string
	MaxSandboxes int // running sandboxes at once
	MaxMemoryMB  int // total memory of its running sandboxes
	MaxCPUs      int // total vCPUs of its running sandboxes
	MaxBuilds    int // template builds at once
	MaxVolumeMB  int // total size limit of its volumes
}

// Volume is a team's persistent directory that outlives sandboxes: they
// mount it read-write by name, and its content API reads and writes it
// with Token as the bearer.
type Volume struct {
	ID     string
	TeamID string
	// Name is unique in the team: ^[a-zA-Z0-9_-]+$, at most 63 characters.
	Name string
	// Token is the bearer of the volume's content API; deleting the volume
	// revokes it.
	Token string
	// SizeMB is the size limit, fixed when the volume is made.
	SizeMB    int
	CreatedAt time.Time
}

// VolumeMount is a volume mounted in a sandbox at Path (absolute).
type VolumeMount struct {
	VolumeID string `json:"volumeID"`
	Name     string `json:"name"`
	Path     string `json:"path"`
}

// Unlimited lifts one of a team's limits.
const Unlimited = -1

// DefaultTeam owns what was made before teams existed, and the admin key.
const DefaultTeam = "default"

// TeamOf names the team of a record whose TeamID is id: records from before
// teams existed have none and belong to DefaultTeam.
func TeamOf(id string) string {
	if id == "" {
		return DefaultTeam
	}
	return id
}

// Snapshot is a saved sandbox state that new sandboxes start from, by id or
// by one of its names.
type Snapshot struct {
	ID         string
	Names      []string
	SandboxID  string // the sandbox it was taken from
	TemplateID string // that sandbox's template
	Backend    string
	Dir        string   // where the backend keeps it
	Layers     []string // read-only disk layers, top first, ending with the template's rootfs
	Memory     bool     // holds a memory image: sandboxes continue its processes
	Hostname   string   // the source's, kept by restored processes
	EnvVars    map[string]string
	CPUCount   int
	MemoryMB   int
	DiskMB     int
	SizeBytes  int64
	CreatedAt  time.Time
	TeamID     string // the team of the sandbox it was taken from
	// VolumeMounts are the source's: a memory image holds files open on
	// them, so a sandbox restored from it mounts the same volumes (whose
	// data is never part of the snapshot).
	VolumeMounts []VolumeMount
}
