package telemetry

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/volume"
)

// DefaultVolumeLimit is how many volumes get per-volume series: beyond
// it, a scrape would grow with every team's volumes, while the per-team
// totals already say where the bytes are.
const DefaultVolumeLimit = 1000

// volumeScrapeTimeout bounds the listing at each scrape, so that a slow
// store or backend makes one scrape miss the volumes, not hang.
const volumeScrapeTimeout = 5 * time.Second

// volumeCollector reports the volumes as the volume service lists them at
// each scrape. UsedBytes is the backend's own figure (the filesystem's
// block count on one machine), so a scrape never walks a volume's tree.
type volumeCollector struct {
	list    func(context.Context) ([]volume.Info, error)
	limit   int
	dropped prometheus.Counter

	used, size, teamUsed *prometheus.Desc
}

// RegisterVolumes adds every team's volumes, read with list, to r.
// Per-volume series are kept for the first limit volumes by id (the same
// ones from one scrape to the next), the rest counted in
// warren_volume_series_dropped_total; the per-team totals count them all.
func (r *Registry) RegisterVolumes(list func(context.Context) ([]volume.Info, error), limit int) {
	per := []string{"volume", "name", "team"}
	r.reg.MustRegister(&volumeCollector{
		list:  list,
		limit: max(limit, 0),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "warren_volume_series_dropped_total",
			Help: "Volumes left out of the per-volume series because of the series limit, summed over scrapes.",
		}),
		used:     prometheus.NewDesc("warren_volume_used_bytes", "Bytes a volume's files take on its backend.", per, nil),
		size:     prometheus.NewDesc("warren_volume_size_bytes", "A volume's size limit.", per, nil),
		teamUsed: prometheus.NewDesc("warren_team_volume_used_bytes", "Bytes all of a team's volumes take.", []string{"team"}, nil),
	})
}

func (c *volumeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.used
	ch <- c.size
	ch <- c.teamUsed
	c.dropped.Describe(ch)
}

func (c *volumeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), volumeScrapeTimeout)
	defer cancel()
	defer c.dropped.Collect(ch)
	vols, err := c.list(ctx)
	if err != nil {
		log.G(ctx).Warn("metrics: listing volumes", "err", err)
		return
	}
	teams := map[string]int64{}
	for _, v := range vols {
		teams[v.TeamID] += v.UsedBytes
	}
	for team, used := range teams {
		ch <- prometheus.MustNewConstMetric(c.teamUsed, prometheus.GaugeValue, float64(used), team)
	}
	if len(vols) > c.limit {
		vols = slices.Clone(vols)
		slices.SortFunc(vols, func(a, b volume.Info) int { return strings.Compare(a.ID, b.ID) })
		c.dropped.Add(float64(len(vols) - c.limit))
		vols = vols[:c.limit]
	}
	for _, v := range vols {
		ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, float64(v.UsedBytes), v.ID, v.Name, v.TeamID)
		ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(v.SizeMB)*mib, v.ID, v.Name, v.TeamID)
	}
}
