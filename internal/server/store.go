package server

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/postgres"
	"github.com/warren-sandbox/warren/internal/store/sqlite"
)

// StoreEnv is --store's default, so a URL holding a password need not
// appear on a command line (which every local user can read in ps).
const StoreEnv = "WARREN_STORE"

// StoreFlagHelp describes --store for every command that takes it.
const StoreFlagHelp = "the database: empty for SQLite in the data directory, " +
	"or postgres://… (postgresql://…) for a Postgres shared by a cluster (default $" + StoreEnv + ")"

// OpenStore opens the store url names: SQLite's warren.db in dataDir when
// url is empty, else the Postgres database at url.
func OpenStore(ctx context.Context, url, dataDir string) (store.Store, error) {
	switch {
	case url == "":
		return sqlite.Open(ctx, filepath.Join(dataDir, DBFile))
	case postgres.IsURL(url):
		return postgres.Open(ctx, url)
	}
	return nil, fmt.Errorf("--store must be empty or a postgres:// URL: %w", errdefs.ErrInvalidArgument)
}
