package server

import (
	"errors"

	"github.com/warren-sandbox/warren/internal/admission"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/telemetry"
)

// newStarts is the queue that cold creates, resumes and forks wait in
// while the machine is busy (--start-wait, --start-slots, --start-queue,
// --start-pressure).
func newStarts(cfg *Config, backends map[string]runtime.Backend, metrics *telemetry.Registry) *admission.Queue {
	opts := admission.Options{
		Slots: cfg.StartSlots, MaxWait: cfg.StartWait, MaxQueue: cfg.StartQueue,
		HighPressure: cfg.StartPressure, Observe: metrics.ObserveStart,
	}
	if cfg.StartPressure > 0 {
		opts.Pressure = sandboxesCPUPressure(backends)
	}
	return admission.New(opts)
}

// cpuPressurer is a backend that knows its sandboxes' CPU pressure.
type cpuPressurer interface{ CPUPressure() (float64, error) }

// sandboxesCPUPressure is the highest CPU pressure any backend's
// sandboxes report; an error when none can tell.
func sandboxesCPUPressure(backends map[string]runtime.Backend) func() (float64, error) {
	return func() (float64, error) {
		var worst float64
		var errs []error
		known := false
		for _, b := range backends {
			p, ok := b.(cpuPressurer)
			if !ok {
				continue
			}
			v, err := p.CPUPressure()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			known, worst = true, max(worst, v)
		}
		if !known {
			return 0, errors.Join(append(errs, errors.New("no backend reports its sandboxes' CPU pressure"))...)
		}
		return worst, nil
	}
}
