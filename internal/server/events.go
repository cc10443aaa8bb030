package server

import (
	"net/netip"

	"github.com/warren-sandbox/warren/internal/events"
	"github.com/warren-sandbox/warren/internal/netguard"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/telemetry"
)

// newEvents makes the service that records lifecycle events and delivers
// them to webhooks. Webhook URLs are the users' to choose and are called
// from the host, so deliveries go through the same guard as image pulls:
// no loopback, private, link-local, host or sandbox address unless the
// operator allows its range (--webhook-allow).
func newEvents(cfg *Config, st store.Store, metrics *telemetry.Registry) *events.Service {
	var deny []netip.Prefix
	if sub, err := netip.ParsePrefix(cfg.Subnet); err == nil {
		deny = append(deny, sub)
	}
	return events.New(events.Options{
		Store:     st,
		Retention: cfg.EventsRetention,
		Guard:     &netguard.Guard{Allow: cfg.WebhookAllow, Deny: deny},
		Observe:   metrics.ObserveWebhook,
	})
}
