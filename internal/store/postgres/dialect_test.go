package postgres

import "testing"

// TestRebind: the shared statements' '?' become Postgres' numbered
// parameters, in order, and a statement already numbered is left alone.
func TestRebind(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT a FROM t WHERE id = ?", "SELECT a FROM t WHERE id = $1"},
		{"UPDATE t SET a = ?, b = ? WHERE id = ? AND node = ?", "UPDATE t SET a = $1, b = $2 WHERE id = $3 AND node = $4"},
		{"INSERT INTO t VALUES (?, ?)", "INSERT INTO t VALUES ($1, $2)"},
		{"SELECT $1, $2", "SELECT $1, $2"},
	}
	for _, tt := range tests {
		if got := rebind(tt.in); got != tt.want {
			t.Errorf("rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := rebind(tt.in); got != tt.want { // from the cache
			t.Errorf("rebind(%q) again = %q, want %q", tt.in, got, tt.want)
		}
	}
}
