package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestMetrics drives a real server with --metrics-listen: the scrape
// (without a key there; with the admin key as a bearer token on the API's
// /metrics) shows a sandbox the Go SDK creates in warren_sandboxes and its
// per-sandbox gauges, the create histogram and the API's request counts;
// /usage reports it at the next minute; once killed it is gone from the
// scrape and counted in the kill histogram.
func TestMetrics(t *testing.T) {
	cfg := loadConfig(t)
	rt := cfg.runtimes[0]
	metricsAddr := freeLoopbackAddr(t)
	s := launchServer(t, cfg, serverOpts{index: 150, runtime: rt, args: []string{"--metrics-listen", metricsAddr}})
	scrapeURL := "http://" + metricsAddr + "/metrics"
	checkAPIMetricsAuth(t, s)

	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	running := fmt.Sprintf(`warren_sandboxes{runtime=%q,state="running",team="default",template="base"} 1`, rt)
	perSandbox := regexp.MustCompile(`warren_sandbox_memory_bytes\{sandbox_id="` + sb.ID + `",team="default",template="base"\} ([0-9.e+]+)`)
	// The sampler takes a sample every 5 s; the gauges follow the first.
	body := pollScrape(t, scrapeURL, 30*time.Second, func(b string) bool {
		return strings.Contains(b, running) && perSandbox.MatchString(b)
	})
	if mem, _ := strconv.ParseFloat(perSandbox.FindStringSubmatch(body)[1], 64); mem <= 0 {
		t.Errorf("the sandbox uses %v bytes of memory", mem)
	}
	for _, want := range []string{
		fmt.Sprintf(`warren_sandbox_create_duration_seconds_count{outcome="success",runtime=%q} 1`, rt),
		`warren_sandbox_cpu_usage_ratio{sandbox_id="` + sb.ID + `"`,
		`warren_sandbox_disk_limit_bytes{sandbox_id="` + sb.ID + `"`,
		`warren_http_requests_total{code="201",route="POST /`,
		`warren_http_requests_total{code="401",route="GET /metrics"} 1`,
		`warren_http_request_duration_seconds_bucket{route="GET /health",le="+Inf"}`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in the scrape:\n%s", want, warrenLines(body))
		}
	}
	checkUsage(t, c)

	if err := sb.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	body = pollScrape(t, scrapeURL, 10*time.Second, func(b string) bool {
		return !strings.Contains(b, `sandbox_id="`+sb.ID+`"`) && !strings.Contains(b, running)
	})
	if want := fmt.Sprintf(`warren_sandbox_kill_duration_seconds_count{outcome="success",runtime=%q} 1`, rt); !strings.Contains(body, want) {
		t.Errorf("no %s after the kill:\n%s", want, warrenLines(body))
	}
}

// checkAPIMetricsAuth: on the API's listener /metrics wants the admin key,
// here as a bearer token.
func checkAPIMetricsAuth(t *testing.T, s *server) {
	t.Helper()
	for _, tc := range []struct {
		auth   string
		status int
	}{{"", 401}, {"Bearer " + s.apiKey, 200}} {
		req, _ := http.NewRequest("GET", s.url+"/metrics", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Fatalf("GET %s/metrics with %q = %d %.200s, want %d", s.url, tc.auth, resp.StatusCode, b, tc.status)
		}
	}
}

// checkUsage waits for the minute sample that counts the running sandbox.
func checkUsage(t *testing.T, c *warren.Client) {
	t.Helper()
	deadline := time.Now().Add(75 * time.Second)
	for {
		u, err := c.Usage(t.Context(), time.Now().Add(-10*time.Minute), time.Now().Add(time.Minute), time.Minute)
		if err != nil {
			t.Fatalf("Usage: %v", err)
		}
		for _, p := range u.Points {
			if p.RunningSandboxes >= 1 && p.VCPUs >= 1 && p.MemoryMB >= 128 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no minute of /usage counts the sandbox: %+v", u)
		}
		time.Sleep(2 * time.Second)
	}
}

// pollScrape scrapes url without a key until ok accepts the text or
// timeout passes.
func pollScrape(t *testing.T, url string, timeout time.Duration, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("scraping %s: %v", url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("scraping %s: %d %.300s", url, resp.StatusCode, b)
		}
		if ok(string(b)) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scrape never got there in %s:\n%s", timeout, warrenLines(string(b)))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// warrenLines keeps warren's own series, for readable failures.
func warrenLines(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "warren_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
