package interpreter

import (
	"context"
	"errors"
	"time"

	"github.com/warren-sandbox/warren/internal/jupyter"
	"github.com/warren-sandbox/warren/internal/log"
)

// outcome is how an execution ended, from the kernel's point of view.
type outcome int

const (
	finished outcome = iota // the kernel replied; state kept
	died                    // the kernel process died; state lost
	stuck                   // the client left and the kernel ignored the interrupt
)

// Error names the server itself emits on the stream.
const (
	errKernelDied = "KernelDied"
	errKernel     = "KernelError"
	errEnvVars    = "EnvVarsError"
)

const diedValue = "The kernel died while running this code (for example os._exit() or running out of memory). " +
	"It has been restarted: the variables, imports and other state of this context were lost."

// lostStateNotice is the stderr line of the first execution after a kernel
// died while idle and was replaced.
func lostStateNotice(language string) string {
	return "[warren] the " + language + " kernel of this context stopped and was restarted; " +
		"variables and imports from earlier runs are gone\n"
}

// run executes code in the context with per-execution env vars, writing the
// stream to out. It returns when nothing more will be written to out.
func (c *Context) run(ctx context.Context, code string, env map[string]string, out *stream) {
	if err := c.queue.lock(ctx); err != nil {
		return // the client left while queued: nothing ran
	}
	handedOff := false
	defer func() {
		if !handedOff {
			c.queue.unlock()
		}
	}()
	k, replaced, err := c.ready(ctx)
	if replaced {
		// Before the code's output, so the client reads why a name it
		// defined earlier is now undefined.
		out.output(evStderr, lostStateNotice(c.Language), time.Now())
	}
	if err != nil {
		out.errorLine(errKernel, err.Error(), "")
		return
	}
	if len(env) > 0 {
		if err := silent(ctx, k, c.lang.saveEnv(env)); err != nil {
			out.errorLine(errEnvVars, err.Error(), "")
			return
		}
	}
	switch c.execute(ctx, k, code, out) {
	case finished:
		if len(env) > 0 {
			if err := silent(ctx, k, c.lang.restoreEnv(env)); err != nil {
				log.G(ctx).Warn("restoring env vars", "err", err)
			}
		}
	case died, stuck:
		// The response ends now; the new kernel starts behind it, still
		// holding the queue so the next execution waits for it.
		handedOff = true
		go func() {
			defer c.queue.unlock()
			if err := c.replace(ctx); err != nil {
				log.G(ctx).Error("restarting kernel", "err", err)
			}
		}()
	}
}

type executeResult struct {
	reply *jupyter.Message
	err   error
}

// execute runs one request on k and watches three things: the reply, the
// kernel process, and the client.
func (c *Context) execute(ctx context.Context, k Kernel, code string, out *stream) outcome {
	conv := &converter{out: out}
	defer conv.close()
	// The kernel call gets its own context: a client leaving must interrupt
	// the code, not abandon the kernel's reply half-way.
	execCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	results := make(chan executeResult, 1)
	go func() {
		reply, err := k.Execute(execCtx, code, conv.handle)
		results <- executeResult{reply, err}
	}()
	select {
	case r := <-results:
		if r.err == nil {
			conv.reply(r.reply)
			return finished
		}
		if c.diedDuring(k) {
			conv.close()
			out.errorLine(errKernelDied, diedValue, "")
			return died
		}
		conv.close()
		out.errorLine(errKernel, r.err.Error(), "")
		return finished
	case <-k.Done():
		conv.close()
		out.errorLine(errKernelDied, diedValue, "")
		return died
	case <-ctx.Done():
		out.abandon()
		return c.interrupt(ctx, k, results)
	}
}

// diedDuring tells a failed Execute caused by the process dying (Done may
// close a moment after the call fails) from any other failure.
func (c *Context) diedDuring(k Kernel) bool {
	t := time.NewTimer(c.opts.DeathGrace)
	defer t.Stop()
	select {
	case <-k.Done():
		return true
	case <-t.C:
		return false
	}
}

// interrupt stops the code of a client that left (timeout or abort). The
// kernel keeps its state unless it ignores the interrupt for
// InterruptGrace, in which case it is replaced so the context is usable.
func (c *Context) interrupt(ctx context.Context, k Kernel, results <-chan executeResult) outcome {
	lg := log.G(ctx)
	lg.Info("client left, interrupting kernel", "cause", context.Cause(ctx))
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.InterruptGrace)
	defer cancel()
	if err := k.Interrupt(ictx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		lg.Warn("interrupting kernel", "err", err)
	}
	select {
	case <-results:
		return finished
	case <-k.Done():
		return died
	case <-ictx.Done():
		lg.Warn("kernel ignored the interrupt, replacing it", "grace", c.opts.InterruptGrace)
		return stuck
	}
}
