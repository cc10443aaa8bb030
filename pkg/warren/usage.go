package warren

import (
	"context"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// Usage is a team's usage over time (warren's GET /usage).
type Usage struct {
	// Team is the team reported; "" for every team together (the admin
	// key without a team).
	Team string
	// Step is the time each point covers.
	Step   time.Duration
	Points []UsagePoint
}

// UsagePoint is one step of a Usage, starting at Time.
type UsagePoint struct {
	Time time.Time
	// RunningSandboxes, VCPUs and MemoryMB (reserved) are the most that
	// were running at once in the step.
	RunningSandboxes, VCPUs int
	MemoryMB                int64
	// CPUUsed is the CPU time the sandboxes used in the step.
	CPUUsed time.Duration
}

// Usage returns the key's team's usage (the admin key: every team's)
// between start and end, one point per step. Zero values take the
// server's defaults: the last 24 hours, at most 300 points. step must be
// whole minutes.
func (c *Client) GetUsage(ctx context.Context, start, end time.Time, step time.Duration) (Usage, error) {
	return c.usage(ctx, "", start, end, step)
}

// GetTeamUsage is GetUsage of one team, which only the admin key may ask for
// (another team's key gets ErrUnauthorized, for a 403).
func (c *Client) GetTeamUsage(ctx context.Context, team string, start, end time.Time, step time.Duration) (Usage, error) {
	return c.usage(ctx, team, start, end, step)
}

func (c *Client) usage(ctx context.Context, team string, start, end time.Time, step time.Duration) (Usage, error) {
	var p rest.GetUsageParams
	if !start.IsZero() {
		s := start.Unix()
		p.Start = &s
	}
	if !end.IsZero() {
		e := end.Unix()
		p.End = &e
	}
	if step > 0 {
		s := int64(step / time.Second)
		p.Step = &s
	}
	if team != "" {
		p.Team = &team
	}
	resp, err := c.api.GetUsageWithResponse(ctx, &p)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return Usage{}, err
	}
	u := Usage{Step: time.Duration(resp.JSON200.Step) * time.Second, Points: make([]UsagePoint, 0, len(resp.JSON200.Points))}
	if resp.JSON200.Team != nil {
		u.Team = *resp.JSON200.Team
	}
	for _, pt := range resp.JSON200.Points {
		u.Points = append(u.Points, UsagePoint{
			Time: pt.Timestamp, RunningSandboxes: pt.RunningSandboxes, VCPUs: pt.Vcpus, MemoryMB: pt.MemoryMB,
			CPUUsed: time.Duration(pt.CPUUsedSeconds * float64(time.Second)),
		})
	}
	return u, nil
}
