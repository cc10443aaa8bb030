package admission

import "time"

// Stats is the queue as it is now, for metrics and the dashboard.
type Stats struct {
	Running    int           // starts under way
	Waiting    int           // starts waiting for their turn
	Slots      int           // starts that may run at once now
	OldestWait time.Duration // how long the oldest waiter has waited
	// Counts of waits by how they ended, since the server started.
	Admitted, TimedOut, Full, Cancelled uint64
	// WaitedTotal is the total wait of admitted starts that waited.
	WaitedTotal time.Duration
	// WaitingByTeam is how many starts each team has waiting.
	WaitingByTeam map[string]int
}

// Stats reports the queue's state.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := Stats{
		Running: q.running, Waiting: q.waiting, Slots: q.slots(),
		Admitted: q.counts[Admitted], TimedOut: q.counts[TimedOut], Full: q.counts[Full], Cancelled: q.counts[Cancelled],
		WaitedTotal: q.waited, WaitingByTeam: map[string]int{},
	}
	now := time.Now()
	for team, ws := range q.teams {
		s.WaitingByTeam[team] = len(ws)
		if len(ws) > 0 && now.Sub(ws[0].since) > s.OldestWait {
			s.OldestWait = now.Sub(ws[0].since)
		}
	}
	return s
}
