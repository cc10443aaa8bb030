package telemetry

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// opBuckets span a pause thawed in milliseconds to a cold create that
// builds nothing but waits on a slow start command (seconds to a minute).
var opBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60}

// buildBuckets span a cached rebuild (a second) to a large image (an hour).
var buildBuckets = []float64{1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600}

// Outcomes of a lifecycle operation, a bounded label: the error classes
// fold into what an operator acts on.
const (
	OutcomeSuccess  = "success"
	OutcomeRejected = "rejected" // quota, host capacity, unavailable: try later
	OutcomeInvalid  = "invalid"  // the request's side: not found, bad input, conflict, the client gone
	OutcomeError    = "error"    // warren's or the runtime's fault
)

// Outcome classifies err for the outcome label.
func Outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeSuccess
	case errors.Is(err, errdefs.ErrQuotaExceeded), errors.Is(err, errdefs.ErrResourceExhausted),
		errors.Is(err, errdefs.ErrUnavailable), errors.Is(err, errdefs.ErrNoSpace):
		return OutcomeRejected
	case errors.Is(err, errdefs.ErrNotFound), errors.Is(err, errdefs.ErrInvalidArgument),
		errdefs.IsConflict(err), errors.Is(err, errdefs.ErrPermissionDenied), errors.Is(err, errdefs.ErrNotImplemented),
		errors.Is(err, context.Canceled):
		return OutcomeInvalid
	default:
		return OutcomeError
	}
}

// ops holds the lifecycle and build histograms.
type ops struct {
	byOp          map[string]*prometheus.HistogramVec
	builds        *prometheus.CounterVec
	buildDuration *prometheus.HistogramVec
}

func newOps(reg prometheus.Registerer) *ops {
	o := &ops{byOp: map[string]*prometheus.HistogramVec{}}
	for _, op := range []string{sandbox.OpCreate, sandbox.OpPause, sandbox.OpResume, sandbox.OpKill} {
		o.byOp[op] = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warren_sandbox_" + op + "_duration_seconds",
			Help:    "How long sandbox " + op + "s took, by runtime and outcome (" + OutcomeSuccess + ", " + OutcomeRejected + ", " + OutcomeInvalid + ", " + OutcomeError + ").",
			Buckets: opBuckets,
		}, []string{"runtime", "outcome"})
		reg.MustRegister(o.byOp[op])
	}
	o.builds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "warren_template_builds_total",
		Help: "Template builds finished, by result (ready, error, cancelled).",
	}, []string{"result"})
	o.buildDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "warren_template_build_duration_seconds",
		Help:    "How long template builds ran, by result.",
		Buckets: buildBuckets,
	}, []string{"result"})
	reg.MustRegister(o.builds, o.buildDuration)
	return o
}

// ObserveOp records a sandbox lifecycle operation; it is the manager's
// sandbox.OpObserver.
func (r *Registry) ObserveOp(op, runtime string, took time.Duration, err error) {
	h, ok := r.ops.byOp[op]
	if !ok {
		return
	}
	h.WithLabelValues(runtime, Outcome(err)).Observe(took.Seconds())
}

// ObserveBuild records a finished template build.
func (r *Registry) ObserveBuild(result string, took time.Duration) {
	r.ops.builds.WithLabelValues(result).Inc()
	r.ops.buildDuration.WithLabelValues(result).Observe(took.Seconds())
}

// statusText holds the code label of every status an HTTP server sends,
// so labelling a request allocates nothing.
var statusText = func() [600]string {
	var t [600]string
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// codeLabel is status as a label value.
func codeLabel(status int) string {
	if status >= 0 && status < len(statusText) {
		return statusText[status]
	}
	return "other"
}
