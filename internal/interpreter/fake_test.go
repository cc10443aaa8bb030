package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/jupyter"
)

// script scripts a fake kernel: it gets each executed code and emits iopub
// messages, then returns the execute_reply.
type script func(ctx context.Context, k *fakeKernel, code string, emit func(*jupyter.Message)) (*jupyter.Message, error)

// fakeKernel implements Kernel with a script and records what it was asked.
type fakeKernel struct {
	script script

	mu         sync.Mutex // mu protects the fields below
	codes      []string
	count      int // execution_count: only non-silent executes move it, as in ipykernel
	loudHidden int // hidden snippets that came through Execute instead of ExecuteSilent
	interrupts int
	restarts   int
	shutdowns  int
	done       chan struct{}
	interrupt  chan struct{} // closed and replaced on each Interrupt
	exec       sync.Mutex    // Execute is serialised per kernel, like the real one
}

var _ Kernel = (*fakeKernel)(nil)

func newFakeKernel(s script) *fakeKernel {
	return &fakeKernel{script: s, done: make(chan struct{}), interrupt: make(chan struct{})}
}

func (k *fakeKernel) Execute(ctx context.Context, code string, onMsg func(*jupyter.Message)) (*jupyter.Message, error) {
	k.exec.Lock()
	defer k.exec.Unlock()
	k.mu.Lock()
	k.codes = append(k.codes, code)
	k.count++
	hidden := isHidden(code)
	if hidden {
		k.loudHidden++
	}
	k.mu.Unlock()
	if hidden {
		return reply("ok"), nil
	}
	return k.script(ctx, k, code, onMsg)
}

func (k *fakeKernel) ExecuteSilent(_ context.Context, code string) (*jupyter.Message, error) {
	k.exec.Lock()
	defer k.exec.Unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.codes = append(k.codes, code)
	return reply("ok"), nil
}

// executionCount is the count of the execute in progress.
func (k *fakeKernel) executionCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.count
}

func (k *fakeKernel) Interrupt(context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.interrupts++
	close(k.interrupt)
	k.interrupt = make(chan struct{})
	return nil
}

func (k *fakeKernel) interrupted() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.interrupt
}

func (k *fakeKernel) Restart(context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.restarts++
	return nil
}

func (k *fakeKernel) Shutdown(context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.shutdowns++
	return nil
}

func (k *fakeKernel) Done() <-chan struct{} { return k.done }

// die simulates the kernel process exiting.
func (k *fakeKernel) die() {
	k.mu.Lock()
	defer k.mu.Unlock()
	select {
	case <-k.done:
	default:
		close(k.done)
	}
}

func (k *fakeKernel) executed() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.codes...)
}

// userCodes is what the kernel ran, minus the server's hidden snippets.
func (k *fakeKernel) userCodes() []string {
	var out []string
	for _, c := range k.executed() {
		if !isHidden(c) {
			out = append(out, c)
		}
	}
	return out
}

func (k *fakeKernel) counts() (interrupts, restarts, shutdowns int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.interrupts, k.restarts, k.shutdowns
}

// isHidden recognises the server's snippets in every language.
func isHidden(code string) bool {
	for _, p := range []string{"__import__('os')", "__e2b", "def __e2b", "(() => {", "cd '", "export ", "if [ -n"} {
		if strings.HasPrefix(code, p) {
			return true
		}
	}
	return false
}

// fakeStarter launches fake kernels and remembers them.
type fakeStarter struct {
	script script

	mu      sync.Mutex // mu protects kernels and specs
	kernels []*fakeKernel
	specs   []KernelSpec
	fail    error
}

func (f *fakeStarter) start(_ context.Context, spec KernelSpec) (Kernel, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	k := newFakeKernel(f.script)
	f.kernels = append(f.kernels, k)
	f.specs = append(f.specs, spec)
	return k, nil
}

func (f *fakeStarter) all() []*fakeKernel {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*fakeKernel(nil), f.kernels...)
}

// msg builds an iopub message of type typ.
func msg(typ string, content any) *jupyter.Message {
	b, err := json.Marshal(content)
	if err != nil {
		panic(err)
	}
	return &jupyter.Message{
		Header:  jupyter.Header{MsgType: typ, Date: time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)},
		Content: b,
	}
}

func reply(status string) *jupyter.Message {
	return msg("execute_reply", map[string]any{"status": status, "execution_count": 1})
}

func errorReply(ename, evalue string) *jupyter.Message {
	return msg("execute_reply", map[string]any{"status": "error", "ename": ename, "evalue": evalue, "traceback": []string{"tb"}})
}

// defaultScript answers a few codes the tests use.
func defaultScript(ctx context.Context, k *fakeKernel, code string, emit func(*jupyter.Message)) (*jupyter.Message, error) {
	intr := k.interrupted() // before any output, so an interrupt after it is seen
	emit(msg("execute_input", map[string]any{"execution_count": k.executionCount(), "code": code}))
	switch code {
	case "block":
		<-ctx.Done()
		return nil, ctx.Err()
	case "sleep": // stops on interrupt, like time.sleep under SIGINT
		select {
		case <-intr:
			emit(msg("error", map[string]any{"ename": "KeyboardInterrupt", "evalue": "", "traceback": []string{"KeyboardInterrupt"}}))
			return errorReply("KeyboardInterrupt", ""), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "die":
		k.die()
		return nil, errors.New("kernel connection lost")
	}
	emit(msg("stream", map[string]any{"name": "stdout", "text": code + "\n"}))
	return reply("ok"), nil
}
