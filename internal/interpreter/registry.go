package interpreter

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// defaultAlias is the id that names the default Python context; GET
// /contexts does not list it (the context appears under its own id).
const defaultAlias = "default"

// pendingDefault lets concurrent first users of a language share one kernel
// start.
type pendingDefault struct {
	done chan struct{}
	c    *Context
	err  error
}

// lookup resolves a context id; "default" is the Python default context,
// created if needed.
func (s *Server) lookup(ctx context.Context, id string) (*Context, error) {
	if id == defaultAlias {
		return s.defaultContext(ctx, "python")
	}
	s.mu.Lock()
	c, ok := s.contexts[id]
	s.mu.Unlock()
	if !ok {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("Context %s not found", id))
	}
	return c, nil
}

// defaultContext returns the language's default context, creating it on
// first use. The kernel start is not tied to the caller: a client that
// leaves does not waste it for the next one.
func (s *Server) defaultContext(ctx context.Context, lang string) (*Context, error) {
	s.mu.Lock()
	if c := s.defaults[lang]; c != nil {
		s.mu.Unlock()
		return c, nil
	}
	p := s.pending[lang]
	if p == nil {
		p = &pendingDefault{done: make(chan struct{})}
		s.pending[lang] = p
		go s.createDefault(context.WithoutCancel(ctx), lang, p)
	}
	s.mu.Unlock()
	select {
	case <-p.done:
		return p.c, p.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the default %s context: %w", lang, ctx.Err())
	}
}

func (s *Server) createDefault(ctx context.Context, lang string, p *pendingDefault) {
	p.c, p.err = s.create(ctx, lang, s.opts.Cwd)
	s.mu.Lock()
	delete(s.pending, lang)
	if p.err == nil {
		s.defaults[lang] = p.c
	}
	s.mu.Unlock()
	close(p.done)
}

// create starts a new context. lang must be normalized.
func (s *Server) create(ctx context.Context, lang, cwd string) (*Context, error) {
	c, err := s.newContext(lang, cwd)
	if err != nil {
		return nil, err
	}
	k, err := c.launch(ctx)
	if err != nil {
		return nil, fmt.Errorf("creating %s context: %w", lang, err)
	}
	c.kernel = k
	if err := s.register(c); err != nil {
		c.shutdown(ctx)
		return nil, err
	}
	return c, nil
}

// declare makes lang's default context without starting its kernel: the
// context exists (and is listed) from the start, as the reference server's
// javascript context does, and its kernel starts on first use, so a
// sandbox that never runs that language never pays for its kernel.
func (s *Server) declare(lang string) error {
	c, err := s.newContext(lang, s.opts.Cwd)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.defaults[lang] != nil || s.pending[lang] != nil || s.closed {
		return nil
	}
	s.contexts[c.ID] = c
	s.defaults[lang] = c
	return nil
}

// newContext makes a context with no kernel yet. Its number is taken now,
// before any kernel starts: contexts are listed in the order they were
// asked for, however long each kernel took.
func (s *Server) newContext(lang, cwd string) (*Context, error) {
	l := languages[lang]
	cfg, ok := s.opts.Kernels[l.kernel]
	if !ok {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("language %q is not supported: no %s kernel is installed (available: %v)", lang, l.kernel, s.languages()))
	}
	c := &Context{
		ID:       newID(),
		Language: lang,
		Cwd:      cwd,
		lang:     l,
		spec:     cfg.spec(lang, s.opts.KernelDir),
		start:    s.opts.Start,
		env:      s.env,
		opts:     &s.opts,
	}
	s.mu.Lock()
	s.created++
	c.seq = s.created
	s.mu.Unlock()
	return c, nil
}

// register lists a started context, unless the server closed meanwhile.
func (s *Server) register(c *Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errdefs.New(errdefs.ErrUnavailable, "the interpreter is shutting down")
	}
	s.contexts[c.ID] = c
	return nil
}

// remove deletes a context and shuts its kernel down. Removing a default
// context makes the next use of its language create a fresh one.
func (s *Server) remove(ctx context.Context, id string) error {
	c, err := s.lookup(ctx, id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.contexts, c.ID)
	if s.defaults[c.Language] == c {
		delete(s.defaults, c.Language)
	}
	s.mu.Unlock()
	c.shutdown(ctx)
	return nil
}

// list returns every context in the order they were created, as the
// reference server's (a Python dict, insertion-ordered) lists them. Default
// contexts still starting are waited for, so they are listed from the
// start; one that fails to start is left out.
func (s *Server) list(ctx context.Context) ([]contextInfo, error) {
	s.mu.Lock()
	var waits []chan struct{}
	for _, p := range s.pending {
		waits = append(waits, p.done)
	}
	s.mu.Unlock()
	for _, done := range waits {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the default contexts: %w", ctx.Err())
		}
	}
	s.mu.Lock()
	all := slices.Collect(maps.Values(s.contexts))
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b *Context) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]contextInfo, 0, len(all))
	for _, c := range all {
		out = append(out, c.info())
	}
	return out, nil
}

// languages lists the languages that have a kernel.
func (s *Server) languages() []string {
	var out []string
	for name, l := range languages {
		if _, ok := s.opts.Kernels[l.kernel]; ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// newID returns a random UUID-shaped id, as the reference server's are.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
