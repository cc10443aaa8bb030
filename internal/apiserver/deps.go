package apiserver

import (
	"context"
	"io"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/builder"
)

// Records is what the routes every role serves itself read of the
// sandboxes: on one machine (and a node) the manager's, on a cluster's API
// role the store's records of every node (cluster.Sandboxes), which acts on
// none: the routes that act are relayed to the nodes (Relay).
type Records interface {
	Get(ctx context.Context, id string) (*store.Sandbox, error)
	List(ctx context.Context) ([]*store.Sandbox, error)
	ListSnapshots(ctx context.Context, sandboxID, name string) ([]*store.Snapshot, error)
}

// Sandboxes is what the API asks of the sandbox manager
// (*lifecycle.Manager): the handlers' calls and nothing more, so a test can
// stand in for it and the API never reaches past it.
type Sandboxes interface {
	Records
	Create(ctx context.Context, req sandbox.CreateRequest) (*store.Sandbox, error)
	Kill(ctx context.Context, id string) error
	Connect(ctx context.Context, id string, timeout time.Duration, memory bool) (sb *store.Sandbox, resumed bool, err error)
	Pause(ctx context.Context, id string, keepMemory bool) error
	SetTimeout(ctx context.Context, id string, d time.Duration) error
	Refresh(ctx context.Context, id string, d time.Duration) error
	UpdateNetwork(ctx context.Context, id string, egress netpolicy.Egress) error

	Snapshot(ctx context.Context, id, name string) (*store.Snapshot, error)
	DeleteSnapshot(ctx context.Context, idOrName string) error
	Fork(ctx context.Context, id string, count int, timeout time.Duration) ([]sandbox.ForkResult, error)

	Metrics(ctx context.Context, id string, from, to int64) ([]sandbox.Metric, error)
	LatestMetric(ctx context.Context, id string) (_ *sandbox.Metric, ok bool, _ error)
	Logs(ctx context.Context, id string, q sandboxlog.Query) ([]sandboxlog.Entry, error)
}

// Builder is what the API asks of the template builder (*builder.Builder).
type Builder interface {
	RequestBuild(ctx context.Context, req builder.BuildRequest) (*store.Template, *store.Build, error)
	Start(ctx context.Context, templateID, buildID string, req *wire.BuildStart) error
	Cancel(buildID string) bool
	Logs(buildID string, offset int) ([]wire.BuildLogEntry, error)
	HasFiles(hash string) bool
	SaveFiles(hash string, r io.Reader, limit int64) error
	AssignTags(ctx context.Context, target string, tags []string) (string, error)
	RemoveTags(ctx context.Context, name string, tags []string) error
	DeleteTemplate(ctx context.Context, idOrAlias string) error
}
