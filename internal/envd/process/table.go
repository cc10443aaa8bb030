package process

import (
	"fmt"
	"sync"
	"time"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// table indexes processes by pid: running ones, and exited ones for a
// retention period.
type table struct {
	mu sync.Mutex
	// procs is guarded by mu.
	procs map[int]*proc
}

func newTable() *table {
	return &table{procs: map[int]*proc{}}
}

func (t *table) add(p *proc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.procs[p.pid] = p
}

// retire schedules an exited process's removal. A pid the kernel has
// reused meanwhile belongs to the newer record, which stays.
func (t *table) retire(p *proc, after time.Duration) {
	time.AfterFunc(after, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.procs[p.pid] == p {
			delete(t.procs, p.pid)
		}
	})
}

// running lists the processes that have not ended.
func (t *table) running() []*proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*proc, 0, len(t.procs))
	for _, p := range t.procs {
		if p.running() {
			out = append(out, p)
		}
	}
	return out
}

// find returns the process sel names, running or retained. A tag matches the
// running process with that tag first, then the latest exited one.
func (t *table) find(sel *pb.ProcessSelector) (*proc, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch s := sel.GetSelector().(type) {
	case *pb.ProcessSelector_Pid:
		if p, ok := t.procs[int(s.Pid)]; ok {
			return p, nil
		}
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("process with pid %d not found", s.Pid))
	case *pb.ProcessSelector_Tag:
		var best *proc
		for _, p := range t.procs {
			if p.tag == nil || *p.tag != s.Tag {
				continue
			}
			if best == nil || p.running() || (!best.running() && p.exitedAt.Load() > best.exitedAt.Load()) {
				best = p
				if p.running() {
					break
				}
			}
		}
		if best == nil {
			return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("process with tag %q not found", s.Tag))
		}
		return best, nil
	default:
		return nil, errdefs.New(errdefs.ErrInvalidArgument, "process selector needs a pid or a tag")
	}
}

// findRunning is find restricted to running processes: signals, input and
// resizes are meaningless for an exited one, so it is not found.
func (t *table) findRunning(sel *pb.ProcessSelector) (*proc, error) {
	p, err := t.find(sel)
	if err != nil {
		return nil, err
	}
	if !p.running() {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("process with pid %d is not running", p.pid))
	}
	return p, nil
}
