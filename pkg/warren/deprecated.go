package warren

import (
	"context"
	"time"
)

// The names below are the SDK's first ones, kept for one release so that
// programs written against them still compile. The SDK now names every
// Client method Verb+Noun (the sandbox, the Client's own resource, needs
// no noun: Create, List, Kill), reads with Get (one) or List (many), and
// takes option structs instead of bare bools.

// Pause freezes a sandbox; with keepMemory false only its disk is kept.
//
// Deprecated: use PauseSandbox (or Sandbox.Pause) with PauseOptions.
func (c *Client) Pause(ctx context.Context, id string, keepMemory bool) error {
	return c.PauseSandbox(ctx, id, PauseOptions{DiskOnly: !keepMemory})
}

// Signal sends SIGTERM (or SIGKILL with kill) to a process.
//
// Deprecated: use SendSignal.
func (c *Commands) Signal(ctx context.Context, pid int, kill bool) (bool, error) {
	if kill {
		return c.SendSignal(ctx, pid, SIGKILL)
	}
	return c.SendSignal(ctx, pid, SIGTERM)
}

// Info returns a sandbox's details.
//
// Deprecated: use GetInfo.
func (c *Client) Info(ctx context.Context, id string) (Info, error) { return c.GetInfo(ctx, id) }

// Info returns the sandbox's details.
//
// Deprecated: use GetInfo.
func (s *Sandbox) Info(ctx context.Context) (Info, error) { return s.GetInfo(ctx) }

// Metrics returns a sandbox's samples.
//
// Deprecated: use GetMetrics.
func (c *Client) Metrics(ctx context.Context, id string, start, end time.Time) ([]Metric, error) {
	return c.GetMetrics(ctx, id, start, end)
}

// Logs returns a page of a sandbox's log.
//
// Deprecated: use GetLogs.
func (c *Client) Logs(ctx context.Context, id string, o LogOptions) ([]LogEntry, error) {
	return c.GetLogs(ctx, id, o)
}

// Snapshots lists the snapshots.
//
// Deprecated: use ListSnapshots.
func (c *Client) Snapshots(ctx context.Context, sandboxID string) ([]Snapshot, error) {
	return c.ListSnapshots(ctx, sandboxID)
}

// Events returns the team's sandboxes' lifecycle events.
//
// Deprecated: use ListEvents.
func (c *Client) Events(ctx context.Context, o EventOptions) ([]Event, error) {
	return c.ListEvents(ctx, o)
}

// SandboxEvents returns one sandbox's lifecycle events.
//
// Deprecated: use ListSandboxEvents.
func (c *Client) SandboxEvents(ctx context.Context, sandboxID string, o EventOptions) ([]Event, error) {
	return c.ListSandboxEvents(ctx, sandboxID, o)
}

// Nodes lists the cluster's nodes.
//
// Deprecated: use ListNodes.
func (c *Client) Nodes(ctx context.Context) ([]Node, error) { return c.ListNodes(ctx) }

// TemplateTags lists a template's tags.
//
// Deprecated: use ListTemplateTags.
func (c *Client) TemplateTags(ctx context.Context, idOrName string) ([]Tag, error) {
	return c.ListTemplateTags(ctx, idOrName)
}

// TemplateFiles asks whether the files with this hash are uploaded.
//
// Deprecated: use GetTemplateFiles.
func (c *Client) TemplateFiles(ctx context.Context, templateID, hash string) (FilesLink, error) {
	return c.GetTemplateFiles(ctx, templateID, hash)
}

// BuildStatus returns a build's state and a page of its log.
//
// Deprecated: use GetBuildStatus.
func (c *Client) BuildStatus(ctx context.Context, templateID, buildID string, logsOffset int) (*BuildStatus, error) {
	return c.GetBuildStatus(ctx, templateID, buildID, logsOffset)
}

// BuildLogs returns a page of a build's log.
//
// Deprecated: use GetBuildLogs.
func (c *Client) BuildLogs(ctx context.Context, templateID, buildID string, o BuildLogsOptions) ([]BuildLogEntry, error) {
	return c.GetBuildLogs(ctx, templateID, buildID, o)
}

// Usage is the team's usage over time.
//
// Deprecated: use GetUsage.
func (c *Client) Usage(ctx context.Context, start, end time.Time, step time.Duration) (Usage, error) {
	return c.GetUsage(ctx, start, end, step)
}

// TeamUsage is one team's usage over time.
//
// Deprecated: use GetTeamUsage.
func (c *Client) TeamUsage(ctx context.Context, team string, start, end time.Time, step time.Duration) (Usage, error) {
	return c.GetTeamUsage(ctx, team, start, end, step)
}

// Webhooks lists the team's webhooks.
//
// Deprecated: use ListWebhooks.
func (c *Client) Webhooks(ctx context.Context) ([]Webhook, error) { return c.ListWebhooks(ctx) }

// Webhook returns one webhook.
//
// Deprecated: use GetWebhook.
func (c *Client) Webhook(ctx context.Context, id string) (Webhook, error) {
	return c.GetWebhook(ctx, id)
}

// WebhookDeliveries returns a webhook's newest deliveries.
//
// Deprecated: use ListWebhookDeliveries.
func (c *Client) WebhookDeliveries(ctx context.Context, id string, limit int) ([]WebhookDelivery, error) {
	return c.ListWebhookDeliveries(ctx, id, limit)
}
