package log

import (
	"fmt"
	"strings"
	"time"
)

// Phases times the consecutive steps of one operation for the debug log,
// so a slow step shows which part of it grew.
type Phases struct {
	last time.Time
	b    strings.Builder
}

// NewPhases starts timing at now.
func NewPhases() *Phases { return &Phases{last: time.Now()} }

// Done ends the step called name and starts the next.
func (p *Phases) Done(name string) {
	now := time.Now()
	fmt.Fprintf(&p.b, "%s=%v ", name, now.Sub(p.last).Round(100*time.Microsecond))
	p.last = now
}

// String is "name=duration ..." in the order the steps ran.
func (p *Phases) String() string { return strings.TrimSpace(p.b.String()) }
