package process

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// spawnRequest is everything needed to start one process.
type spawnRequest struct {
	user     *users.User
	msg      *pb.StartRequest
	deadline time.Time // zero: no lifetime limit
}

// spawn starts the process and returns its record with a subscription taken
// before the process ran, so the caller sees all of its output.
func (s *Service) spawn(ctx context.Context, req spawnRequest) (*proc, *subscription, error) {
	cfg := req.msg.GetProcess()
	if cfg == nil || cfg.GetCmd() == "" {
		return nil, nil, errdefs.New(errdefs.ErrInvalidArgument, "process.cmd is required")
	}
	cwd, err := s.workdir(req.user, cfg)
	if err != nil {
		return nil, nil, err
	}
	env := buildEnv(req.user, s.st.EnvVars(), cfg.GetEnvs())
	path, err := lookPath(cfg.GetCmd(), env, cwd)
	if err != nil {
		return nil, nil, err
	}
	cred, err := credential(req.user)
	if err != nil {
		return nil, nil, err
	}

	stdinWanted := req.msg.Stdin == nil || req.msg.GetStdin()
	sio, err := newStdio(req.msg.GetPty(), stdinWanted)
	if err != nil {
		return nil, nil, err
	}
	defer sio.closeChildEnds()

	reported := proto.CloneOf(cfg)
	reported.Cwd = &cwd
	p := &proc{
		tag: req.msg.Tag, config: reported, pty: sio.pty, stdin: sio.stdin, stdinWanted: stdinWanted,
		outputs: sio.outputs(), out: newFanout(), exitCh: make(chan syscall.WaitStatus, 1), done: make(chan struct{}),
	}
	sub := p.out.subscribe()

	attr := &syscall.ProcAttr{Dir: cwd, Env: env, Files: sio.childFds(), Sys: sio.sysProcAttr(cred)}
	argv := append([]string{cfg.GetCmd()}, cfg.GetArgs()...)
	pid, err := s.reaper.Start(func() (int, error) {
		pid, err := syscall.ForkExec(path, argv, attr)
		runtime.KeepAlive(sio)
		return pid, err
	}, p.onExit)
	if err != nil {
		sub.Close()
		sio.closeParentEnds()
		return nil, nil, fmt.Errorf("starting %q: %w", cfg.GetCmd(), classifyExecErr(err))
	}
	p.pid = pid
	s.run(ctx, p, req.deadline)
	return p, sub, nil
}

// run registers p and starts its goroutines: the output pumps, the waiter
// that turns the exit into an end event, and the deadline killer.
func (s *Service) run(ctx context.Context, p *proc, deadline time.Time) {
	ctx = log.With(context.WithoutCancel(ctx), "pid", p.pid)
	log.G(ctx).Debug("process started", "cmd", p.config.GetCmd(), "pty", p.pty != nil)
	s.procs.add(p)
	if p.pty != nil {
		p.pumps.Add(1)
		go p.pump(p.pty, ptyData)
	} else {
		p.pumps.Add(2)
		go p.pump(p.outputs[0], stdoutData)
		go p.pump(p.outputs[1], stderrData)
	}
	if !deadline.IsZero() {
		p.killer = time.AfterFunc(time.Until(deadline), func() {
			log.G(ctx).Info("process deadline exceeded, killing it")
			_ = s.reaper.Signal(p.pid, syscall.SIGKILL, true)
		})
	}
	go p.wait(ctx, func(p *proc) { s.procs.retire(p, s.retention) })
	s.reaper.Poke() // in case it exited before the reaper looked
}

// workdir resolves the process's cwd: the requested one (resolved like any
// path), else the default workdir, else the user's home.
func (s *Service) workdir(u *users.User, cfg *pb.ProcessConfig) (string, error) {
	cwd := s.st.Resolve(cfg.GetCwd(), u)
	fi, err := os.Stat(cwd)
	if err != nil || !fi.IsDir() {
		return "", errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("cwd '%s' does not exist", cwd))
	}
	return cwd, nil
}

// credential returns the uid/gid/groups to run as. envd runs as root in a
// sandbox; a non-root envd (tests) can only run processes as itself.
func credential(u *users.User) (*syscall.Credential, error) {
	if os.Geteuid() == 0 {
		return &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: u.Groups}, nil
	}
	if u.UID == uint32(os.Geteuid()) {
		return nil, nil
	}
	return nil, errdefs.New(errdefs.ErrPermissionDenied, fmt.Sprintf("envd is not running as root and cannot run processes as user %q", u.Name))
}

func classifyExecErr(err error) error {
	switch err {
	case syscall.ENOENT:
		return fmt.Errorf("%w: %w", errdefs.ErrInvalidArgument, err)
	case syscall.EACCES, syscall.EPERM:
		return fmt.Errorf("%w: %w", errdefs.ErrPermissionDenied, err)
	}
	return err
}
