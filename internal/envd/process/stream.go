package process

import (
	"context"
	"time"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
)

// forward sends sub's events to the client, with a keepalive after every
// interval without an event, until the end event has been sent (nil) or ctx
// ends (deadline_exceeded / canceled). Once ctx is done nothing more is sent,
// so a Start whose deadline killed the process reports deadline_exceeded
// rather than a clean end.
func forward(ctx context.Context, sub *subscription, interval time.Duration, send func(*pb.ProcessEvent) error) error {
	keepalive := time.NewTimer(interval)
	defer keepalive.Stop()
	for {
		select {
		case <-ctx.Done():
			return rpc.StreamEnd(ctx)
		case ev, ok := <-sub.C:
			if !ok {
				return nil
			}
			if ctx.Err() != nil {
				return rpc.StreamEnd(ctx)
			}
			if err := send(ev); err != nil {
				return err
			}
		case <-keepalive.C:
			if err := send(keepaliveEvent()); err != nil {
				return err
			}
		}
		keepalive.Reset(interval)
	}
}
