package sqlite

import (
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	mig "github.com/warren-sandbox/warren/internal/store/migration"
)

// rawDB opens path without migrating, to inspect or tamper with it.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?"+connParams)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func recordedVersions(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SELECT version FROM schema_migrations ORDER BY version")
	if err != nil {
		t.Fatalf("reading schema_migrations: %v", err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestEmbeddedMigrations(t *testing.T) {
	t.Parallel()
	if len(migrations) == 0 {
		t.Fatal("no embedded migrations")
	}
	for i, m := range migrations {
		if m.Version != i+1 || strings.TrimSpace(m.Script) == "" {
			t.Errorf("migration %d: version %d, %d bytes", i, m.Version, len(m.Script))
		}
	}
}

func TestMigrationsApplyOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "warren.db")
	for range 3 {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		got := recordedVersions(t, s.db)
		if len(got) != len(migrations) || got[len(got)-1] != migrations[len(migrations)-1].Version {
			t.Errorf("schema_migrations = %v, want versions 1..%d once each", got, len(migrations))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrateAppliesOnlyNew upgrades a database the way a new release does:
// the old migration would fail if run again (its table exists), so success
// shows only the new one ran.
func TestMigrateAppliesOnlyNew(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := rawDB(t, filepath.Join(t.TempDir(), "warren.db"))
	v1 := []migration{{Version: 1, Name: "0001_a.sql", Script: "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);"}}
	v2 := append(v1, migration{Version: 2, Name: "0002_b.sql", Script: "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (2);"})
	if err := migrate(ctx, db, v1); err != nil {
		t.Fatalf("migrate v1: %v", err)
	}
	for range 2 {
		if err := migrate(ctx, db, v2); err != nil {
			t.Fatalf("migrate v2: %v", err)
		}
	}
	var rows int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM a").Scan(&rows); err != nil || rows != 2 {
		t.Errorf("table a has %d rows (%v), want 2: each script ran once", rows, err)
	}
	if got := recordedVersions(t, db); len(got) != 2 {
		t.Errorf("schema_migrations = %v, want [1 2]", got)
	}
}

// TestMigrateFailureRollsBack checks a failing script leaves no trace, not
// even the migrations before it in the same run.
func TestMigrateFailureRollsBack(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := rawDB(t, filepath.Join(t.TempDir(), "warren.db"))
	migs := []migration{
		{Version: 1, Name: "0001_a.sql", Script: "CREATE TABLE a (x INTEGER);"},
		{Version: 2, Name: "0002_bad.sql", Script: "CREATE TABLE b (y INTEGER); THIS IS NOT SQL;"},
	}
	err := migrate(ctx, db, migs)
	if err == nil || !strings.Contains(err.Error(), "0002_bad.sql") {
		t.Fatalf("migrate = %v, want an error naming 0002_bad.sql", err)
	}
	var n int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE name IN ('a', 'b', 'schema_migrations')").Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("%d tables left behind (%v), want 0", n, err)
	}
}

// TestMigrateBuildsKeepsTemplates upgrades a database written before
// 0004_builds.sql: its templates must survive with the new fields empty, and
// builds and tags must work on them, cascade included.
func TestMigrateBuildsKeepsTemplates(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "warren.db")
	const v = 4
	if migrations[v-1].Name != "0004_builds.sql" {
		t.Fatalf("migration %d is %s, want 0004_builds.sql", v, migrations[v-1].Name)
	}
	db := rawDB(t, path)
	if err := migrate(ctx, db, migrations[:v-1]); err != nil {
		t.Fatalf("migrate to v%d: %v", v-1, err)
	}
	created := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, q := range []string{
		`INSERT INTO templates (id, backend, rootfs_path, cpu_count, memory_mb, disk_mb, envd_version,
			start_cmd, build_id, public, created_at, updated_at, size_bytes, ready_port)
		 VALUES ('t1', 'oci', '/r/t1', 2, 512, 2048, '0.2.0', 'serve', 'old-build', 1, ?1, ?1, 4096, 8000)`,
		`INSERT INTO template_aliases (alias, template_id, position) VALUES ('python', 't1', 0)`,
	} {
		if _, err := db.ExecContext(ctx, q, formatTime(created)); err != nil {
			t.Fatalf("writing the old schema: %v", err)
		}
	}

	s := mustOpen(t, path)
	if got := recordedVersions(t, s.db); len(got) != len(migrations) {
		t.Fatalf("schema_migrations = %v, want all %d versions", got, len(migrations))
	}
	want := &store.Template{ID: "t1", Aliases: []string{"python"}, Backend: "oci", RootfsPath: "/r/t1",
		CPUCount: 2, MemoryMB: 512, DiskMB: 2048, EnvdVersion: "0.2.0", StartCmd: "serve", ReadyPort: 8000,
		BuildID: "old-build", Public: true, TeamID: store.DefaultTeam, CreatedAt: created, UpdatedAt: created, SizeBytes: 4096}
	got, err := s.GetTemplate(ctx, "python")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("GetTemplate after migrating = %+v, %v\nwant %+v", got, err, want)
	}
	if err := s.CreateBuild(ctx, &store.Build{ID: "b1", TemplateID: "t1", CreatedAt: created}); err != nil {
		t.Fatalf("CreateBuild on a migrated template: %v", err)
	}
	if err := s.SetTag(ctx, "t1", "latest", "b1"); err != nil {
		t.Fatalf("SetTag on a migrated template: %v", err)
	}
	if err := s.DeleteTemplate(ctx, "t1"); err != nil {
		t.Fatalf("DeleteTemplate: %v", err)
	}
	if _, err := s.GetBuild(ctx, "b1"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("GetBuild after deleting its migrated template = %v, want ErrNotFound", err)
	}
}

func TestFutureDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "warren.db")
	s := mustOpen(t, path)
	future := migrations[len(migrations)-1].Version + 7
	if _, err := s.db.ExecContext(t.Context(),
		"INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future.sql', '')", future); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := Open(t.Context(), path)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "newer warren") {
		t.Fatalf("Open on a newer database = %v, want ErrFailedPrecondition mentioning a newer warren", err)
	}
}

func TestLoadMigrations(t *testing.T) {
	t.Parallel()
	sql := &fstest.MapFile{Data: []byte("SELECT 1;")}
	tests := []struct {
		name    string
		files   fstest.MapFS
		wantErr string
	}{
		{"ordered", fstest.MapFS{"migrations/0001_a.sql": sql, "migrations/0002_b.sql": sql}, ""},
		{"gap", fstest.MapFS{"migrations/0001_a.sql": sql, "migrations/0003_c.sql": sql}, "want 2"},
		{"starts at 2", fstest.MapFS{"migrations/0002_b.sql": sql}, "want 1"},
		{"no number", fstest.MapFS{"migrations/init.sql": sql}, "NNNN_name.sql"},
		{"no name", fstest.MapFS{"migrations/0001.sql": sql}, "NNNN_name.sql"},
		{"empty", fstest.MapFS{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := mig.Load(tt.files)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("loadMigrations: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("loadMigrations = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestMigrateVolumesKeepsRows upgrades a database written before
// 0017_volumes.sql: its sandboxes and snapshots read with no volume
// mounts, its teams with the default volume quota, and a sandbox whose
// volume_mounts is the empty string reads as none too.
func TestMigrateVolumesKeepsRows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "warren.db")
	const v = 17
	if migrations[v-1].Name != "0017_volumes.sql" {
		t.Fatalf("migration %d is %s, want 0017_volumes.sql", v, migrations[v-1].Name)
	}
	db := rawDB(t, path)
	if err := migrate(ctx, db, migrations[:v-1]); err != nil {
		t.Fatalf("migrate to v%d: %v", v-1, err)
	}
	at := formatTime(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
	for _, q := range []string{
		`INSERT INTO sandboxes (id, template_id, alias, backend, state, envd_access_token, traffic_access_token,
			allow_internet, metadata, env_vars, cpu_count, memory_mb, disk_mb, ip, started_at, end_at,
			auto_pause, auto_resume, api_key_id)
		 VALUES (?1, 't', '', 'runc', 'running', '', '', 1, '{}', '{}', 1, 512, 1024, '', ?2, ?2, 0, 0, '')`,
		`INSERT INTO teams (id, max_sandboxes, max_memory_mb, max_cpus, max_builds) VALUES (?1, 3, 0, 0, 1)`,
		`INSERT INTO snapshots (id, created_at, data) VALUES (?1, ?2, '{"ID":"old","Backend":"runc"}')`,
	} {
		if _, err := db.ExecContext(ctx, q, "old", at); err != nil {
			t.Fatalf("writing the old schema: %v", err)
		}
	}
	s := mustOpen(t, path)
	if _, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET volume_mounts = '' WHERE id = 'old'`); err != nil {
		t.Fatal(err)
	}
	sb, err := s.GetSandbox(ctx, "old")
	if err != nil || sb.VolumeMounts != nil {
		t.Errorf("GetSandbox after migrating = %+v, %v; want no volume mounts", sb, err)
	}
	team, err := s.GetTeam(ctx, "old")
	if err != nil || *team != (store.Team{ID: "old", MaxSandboxes: 3, MaxBuilds: 1}) {
		t.Errorf("GetTeam after migrating = %+v, %v; want MaxVolumeMB 0 (the default)", team, err)
	}
	snap, err := s.GetSnapshot(ctx, "old")
	if err != nil || snap.VolumeMounts != nil || snap.Backend != "runc" {
		t.Errorf("GetSnapshot after migrating = %+v, %v; want no volume mounts", snap, err)
	}
}
