package sqlite

import (
	"net/netip"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/netpolicy"
)

// TestMigrateNetworkPolicy upgrades a database written before
// 0005_network_policy.sql, whose sandboxes kept E2B's network JSON as sent:
// each reads back as warren's policy, and an update stores the new form.
func TestMigrateNetworkPolicy(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "warren.db")
	const v = 5
	if migrations[v-1].Name != "0005_network_policy.sql" {
		t.Fatalf("migration %d is %s, want 0005_network_policy.sql", v, migrations[v-1].Name)
	}
	db := rawDB(t, path)
	if err := migrate(ctx, db, migrations[:v-1]); err != nil {
		t.Fatalf("migrate to v%d: %v", v-1, err)
	}
	rows := map[string]string{
		"plain":   "",
		"egress":  `{"allowOut":["1.2.3.4","*.Example.com","10.1.2.3/8"],"denyOut":["0.0.0.0/0"]}`,
		"ingress": `{"allowPublicTraffic":false,"maskRequestHost":"app:${PORT}","httpsPorts":[8443]}`,
	}
	for id, network := range rows {
		var n any // the column is a BLOB
		if network != "" {
			n = []byte(network)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO sandboxes (id, template_id, alias, backend, state,
			envd_access_token, traffic_access_token, allow_internet, metadata, env_vars, cpu_count, memory_mb,
			disk_mb, ip, started_at, end_at, auto_pause, auto_resume, network, api_key_id, auto_pause_no_memory)
			VALUES (?1, 't', '', 'runc', 'running', '', '', 1, '{}', '{}', 1, 512, 0, '', ?3, ?3, 0, 0, ?2, '', 0)`, id, n, formatTime(time.Now())); err != nil {
			t.Fatalf("writing the old schema: %v", err)
		}
	}
	s := mustOpen(t, path)
	p := netip.MustParsePrefix
	want := map[string]netpolicy.Policy{
		"plain": {Egress: netpolicy.Egress{AllowInternet: true}},
		"egress": {Egress: netpolicy.Egress{AllowInternet: true,
			AllowOut: []netip.Prefix{p("1.2.3.4/32"), p("10.0.0.0/8")}, DenyOut: []netip.Prefix{p("0.0.0.0/0")},
			AllowDomains: []string{"*.example.com"}}},
		"ingress": {Egress: netpolicy.Egress{AllowInternet: true},
			Ingress: netpolicy.Ingress{Private: true, MaskRequestHost: "app:${PORT}", HTTPSPorts: []int{8443}}},
	}
	for id, w := range want {
		sb, err := s.GetSandbox(ctx, id)
		if err != nil || !reflect.DeepEqual(sb.Network, w) {
			t.Fatalf("%s: sandbox %+v, %v\nwant network %+v", id, sb, err, w)
		}
		if err := s.UpdateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
		var legacy, policy *string
		if err := s.db.QueryRowContext(ctx, `SELECT network, network_policy FROM sandboxes WHERE id = ?`, id).Scan(&legacy, &policy); err != nil {
			t.Fatal(err)
		}
		if legacy != nil || (policy == nil) != w.IsZero() {
			t.Errorf("%s after an update: network %v, network_policy %v; want the legacy column cleared", id, legacy, policy)
		}
		again, err := s.GetSandbox(ctx, id)
		if err != nil || !reflect.DeepEqual(again.Network, w) {
			t.Errorf("%s after an update: %+v, %v", id, again.Network, err)
		}
	}
}
