package lifecycle

import (
	"context"
	"errors"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// forgetRetryMax is the longest wait between two attempts of forgetLater.
const forgetRetryMax = 5 * time.Second

// forgetLater deletes sandbox id's record once the store can be reached
// again, then runs done (if the record was there). It is for a record
// whose fate the store could not take when it happened: a sandbox
// destroyed by a kill, or one whose create failed while its record may
// have been committed just as the connection broke. Left alone, either
// would be listed as running with nothing behind it until this node's
// next restart.
func (m *Manager) forgetLater(ctx context.Context, id string, done func()) {
	log.G(ctx).Warn("the store cannot be reached: the sandbox's record is deleted once it can", "sandbox", id)
	// After a shutdown the next start's reconcile settles the record.
	m.goBackground(func(ctx context.Context) {
		for wait := time.Second; ; wait = min(2*wait, forgetRetryMax) {
			if !sleep(ctx, wait) {
				return
			}
			err := m.opts.Store.DeleteSandbox(ctx, id)
			switch {
			case errors.Is(err, errdefs.ErrUnavailable):
				continue
			case err == nil:
				log.G(ctx).Info("deleted the record of a sandbox destroyed while the store was out", "sandbox", id)
				if done != nil {
					done()
				}
			case !errdefs.IsNotFound(err):
				log.G(ctx).Error("deleting the record of a destroyed sandbox", "sandbox", id, "err", err)
			}
			return
		}
	})
}
