package telemetry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/volume"
)

func vol(id, name, team string, sizeMB int, used int64) volume.Info {
	return volume.Info{Volume: store.Volume{ID: id, Name: name, TeamID: team, SizeMB: sizeMB}, UsedBytes: used}
}

func TestVolumeMetrics(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vols    []volume.Info
		err     error
		limit   int
		want    []string
		wantNot []string
	}{
		{
			name:  "per volume and per team",
			vols:  []volume.Info{vol("v1", "data", "acme", 1024, 4096), vol("v2", "cache", "acme", 16, 1<<20), vol("v3", "data", "beta", 512, 0)},
			limit: 10,
			want: []string{
				`warren_volume_used_bytes{name="data",team="acme",volume="v1"} 4096`,
				`warren_volume_size_bytes{name="data",team="acme",volume="v1"} 1.073741824e+09`,
				`warren_volume_used_bytes{name="cache",team="acme",volume="v2"} 1.048576e+06`,
				`warren_volume_size_bytes{name="cache",team="acme",volume="v2"} 1.6777216e+07`,
				`warren_volume_used_bytes{name="data",team="beta",volume="v3"} 0`,
				`warren_team_volume_used_bytes{team="acme"} 1.052672e+06`,
				`warren_team_volume_used_bytes{team="beta"} 0`,
				`warren_volume_series_dropped_total 0`,
			},
		},
		{
			name:    "capped: the first by id stay, team totals count all",
			vols:    []volume.Info{vol("c", "c", "t", 1, 1), vol("a", "a", "t", 1, 2), vol("b", "b", "t", 1, 4)},
			limit:   2,
			want:    []string{`volume="a"`, `volume="b"`, `warren_team_volume_used_bytes{team="t"} 7`, `warren_volume_series_dropped_total 1`},
			wantNot: []string{`volume="c"`},
		},
		{
			name:    "a failed listing shows no volumes",
			err:     errors.New("store down"),
			limit:   10,
			want:    []string{`warren_volume_series_dropped_total 0`},
			wantNot: []string{`warren_volume_used_bytes{`, `warren_team_volume_used_bytes{`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			r.RegisterVolumes(func(ctx context.Context) ([]volume.Info, error) {
				if _, ok := ctx.Deadline(); !ok {
					t.Error("the listing has no deadline")
				}
				return tc.vols, tc.err
			}, tc.limit)
			body := scrape(t, r)
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("no %s in\n%s", w, body)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("%s in\n%s", w, body)
				}
			}
		})
	}
}
