package warren

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// ciServer stands in for warren's proxy in front of the interpreter: it
// checks the routing headers, records each /execute body and answers with
// the scripted reply of the code.
type ciServer struct {
	srv *httptest.Server

	mu     sync.Mutex
	bodies []map[string]any // guarded by mu
}

// ciReplies are the stand-in's answers by the code run: a stream of lines,
// or a status and body.
var ciReplies = map[string]struct {
	status int
	body   string
}{
	"1+1": {200, `{"type":"number_of_executions","execution_count":3}
{"type":"keepalive"}
{"type":"result","text":"2","is_main_result":true}
{"type": "end_of_execution"}
`},
	"print": {200, `{"type":"stdout","text":"hi\n","timestamp":"2024-01-01T00:00:00.000001Z"}

{"type":"stderr","text":"warn\n","timestamp":"2024-01-01T00:00:01Z"}
{"type":"stdout","text":"there\n","timestamp":"2024-01-01T00:00:02Z"}
`},
	"1/0": {200, `{"type":"stdout","text":"before\n","timestamp":"2024-01-01T00:00:00Z"}
{"type":"error","name":"ZeroDivisionError","value":"division by zero","traceback":"Traceback...\nZeroDivisionError: division by zero"}
`},
	"plot": {200, `{"type":"result","is_main_result":false,"png":"iVBORw0KGgo=","text":"<Figure>","chart":{"type":"line","title":"t","x_label":"x","x_scale":"linear","x_ticks":[1,2],"elements":[{"label":"s","points":[[1,4],[2,5]]}]},"application/vnd.custom":{"a":1},"extra":{"text/x-other":"o"}}
{"type":"result","is_main_result":false,"chart":{"type":"superchart","title":null,"elements":[{"type":"bar","title":"b","elements":[{"label":"a","value":3,"group":"g"}]},{"type":"pie","title":"p","elements":[{"label":"x","angle":90,"radius":1}]}]}}
{"type":"result","is_main_result":true,"text":"df","html":"<table></table>","data":{"a":[1,2]},"json":[1,2]}
`},
	"missing context": {404, "Context nope not found"},
	"bad request":     {400, "Only one of context_id or language can be provided"},
	"gone":            {502, `{"sandboxId":"sb1","message":"The sandbox was not found","code":502}`},
	"port closed":     {502, `{"sandboxId":"sb1","message":"The sandbox is running but port is not open","port":49999,"code":502}`},
	"crash":           {500, "kernel exploded"},
	"garbage":         {200, "{\"type\":\"stdout\",\"text\":\"a\"}\nnot json\n"},
}

func newCIServer(t *testing.T) (*ciServer, *Sandbox) {
	t.Helper()
	f := &ciServer{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	c, err := New(Config{APIURL: f.srv.URL, APIKey: "e2b_test", SandboxURL: f.srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	tok := "tok"
	return f, c.sandbox(&rest.Sandbox{SandboxID: "sb1", TemplateID: "code-interpreter-v1", EnvdAccessToken: &tok})
}

func (f *ciServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("E2b-Sandbox-Id") != "sb1" || r.Header.Get("E2b-Sandbox-Port") != "49999" {
		http.Error(w, "not routed to the interpreter: "+r.Header.Get("E2b-Sandbox-Port"), http.StatusTeapot)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/execute":
		f.execute(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/contexts":
		var body map[string]string
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.record(map[string]any{"cwd": body["cwd"], "language": body["language"]})
		_ = json.NewEncoder(w).Encode(CodeContext{ID: "ctx1", Language: "python", Cwd: body["cwd"]})
	case r.Method == http.MethodGet && r.URL.Path == "/contexts":
		io.WriteString(w, `[{"id":"ctx1","language":"python","cwd":"/tmp"},{"id":"ctx2","language":"javascript","cwd":"/home/user"}]`)
	case r.URL.Path == "/contexts/ctx1/restart" && r.Method == http.MethodPost, r.URL.Path == "/contexts/ctx1" && r.Method == http.MethodDelete:
		io.WriteString(w, "null")
	default:
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/contexts/"), "/restart")
		http.Error(w, "Context "+id+" not found", http.StatusNotFound)
	}
}

func (f *ciServer) record(body map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, body)
}

func (f *ciServer) lastBody() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[len(f.bodies)-1]
}

func (f *ciServer) execute(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.record(body)
	code, _ := body["code"].(string)
	if code == "sleep" {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"type":"stdout","text":"started\n","timestamp":"2024-01-01T00:00:00Z"}`+"\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	rep, ok := ciReplies[code]
	if !ok {
		http.Error(w, "unscripted code "+code, http.StatusTeapot)
		return
	}
	if rep.status == http.StatusOK {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
}

// TestRunCode: the stream's lines become the Execution and reach the
// callbacks in order; a code error is Execution.Error, not a Go error.
func TestRunCode(t *testing.T) {
	_, sb := newCIServer(t)
	cases := []struct {
		code      string
		text      string
		count     int
		stdout    []string
		stderr    []string
		events    []string // the callbacks, in order
		errorName string
	}{
		{code: "1+1", text: "2", count: 3, events: []string{"result:2"}},
		{code: "print", stdout: []string{"hi\n", "there\n"}, stderr: []string{"warn\n"},
			events: []string{"stdout:hi\n", "stderr:warn\n", "stdout:there\n"}},
		{code: "1/0", stdout: []string{"before\n"}, events: []string{"stdout:before\n", "error:ZeroDivisionError"}, errorName: "ZeroDivisionError"},
		{code: "plot", text: "df", events: []string{"result:<Figure>", "result:", "result:df"}},
	}
	for _, tc := range cases {
		t.Run(tc.code, func(t *testing.T) {
			var events []string
			var stamps []time.Time
			out := func(m OutputMessage) {
				events = append(events, map[bool]string{false: "stdout:", true: "stderr:"}[m.Error]+m.Line)
				stamps = append(stamps, m.Timestamp)
			}
			ex, err := sb.RunCode(t.Context(), tc.code, RunCodeOptions{OnStdout: out, OnStderr: out,
				OnResult: func(r Result) { events = append(events, "result:"+r.Text) },
				OnError:  func(e ExecutionError) { events = append(events, "error:"+e.Name) }})
			if err != nil {
				t.Fatalf("RunCode: %v", err)
			}
			if ex.Text() != tc.text || ex.ExecutionCount != tc.count || !slices.Equal(ex.Logs.Stdout, tc.stdout) || !slices.Equal(ex.Logs.Stderr, tc.stderr) {
				t.Errorf("execution %+v, text %q", ex, ex.Text())
			}
			if !slices.Equal(events, tc.events) {
				t.Errorf("callbacks %q, want %q", events, tc.events)
			}
			for _, s := range stamps {
				if s.Year() != 2024 {
					t.Errorf("output timestamp %v", s)
				}
			}
			if (ex.Error == nil) != (tc.errorName == "") || ex.Error != nil && (ex.Error.Name != tc.errorName || !strings.Contains(ex.Error.Traceback, "Traceback")) {
				t.Errorf("execution error %+v, want %q", ex.Error, tc.errorName)
			}
		})
	}
}

// TestRunCodeResults: every representation of a result is kept, a chart
// is typed, unknown MIME types land in Extra.
func TestRunCodeResults(t *testing.T) {
	_, sb := newCIServer(t)
	ex, err := sb.RunCode(t.Context(), "plot", RunCodeOptions{})
	if err != nil || len(ex.Results) != 3 {
		t.Fatalf("RunCode = %+v, %v", ex, err)
	}
	fig, super, df := ex.Results[0], ex.Results[1], ex.Results[2]
	if fig.PNG != "iVBORw0KGgo=" || fig.IsMainResult || fig.Chart == nil || fig.Chart.Type != "line" || fig.Chart.Title != "t" ||
		fig.Chart.XLabel != "x" || fig.Chart.XScale != "linear" || len(fig.Chart.XTicks) != 2 {
		t.Errorf("figure %+v, chart %+v", fig, fig.Chart)
	}
	if el := fig.Chart.Elements; len(el) != 1 || el[0].Label != "s" || el[0].Points[1] != [2]any{2.0, 5.0} {
		t.Errorf("line elements %+v", el)
	}
	if string(fig.Extra["application/vnd.custom"]) != `{"a":1}` || string(fig.Extra["text/x-other"]) != `"o"` || len(fig.Extra) != 2 {
		t.Errorf("extra %v", fig.Extra)
	}
	if got := fig.Formats(); !slices.Contains(got, "png") || !slices.Contains(got, "chart") || !slices.Contains(got, "text/x-other") || slices.Contains(got, "html") {
		t.Errorf("formats %q", got)
	}
	sc := super.Chart
	if sc == nil || sc.Type != "superchart" || len(sc.Charts) != 2 || sc.Charts[0].Elements[0].Value != 3 ||
		sc.Charts[0].Elements[0].Group != "g" || sc.Charts[1].Elements[0].Angle != 90 || len(sc.Raw) == 0 {
		t.Errorf("superchart %+v", sc)
	}
	if !df.IsMainResult || df.HTML != "<table></table>" || string(df.Data) != `{"a":[1,2]}` || string(df.JSON) != "[1,2]" || df.Chart != nil || df.Extra != nil {
		t.Errorf("dataframe %+v", df)
	}
}

// TestRunCodeRequest: what RunCode sends, and the contexts' calls.
func TestRunCodeRequest(t *testing.T) {
	f, sb := newCIServer(t)
	ctx := t.Context()
	if _, err := sb.RunCode(ctx, "1+1", RunCodeOptions{Language: "python", Envs: map[string]string{"K": "v"}}); err != nil {
		t.Fatal(err)
	}
	if b := f.lastBody(); b["language"] != "python" || b["env_vars"].(map[string]any)["K"] != "v" || b["context_id"] != nil {
		t.Errorf("body %v", b)
	}
	cc, err := sb.CreateCodeContext(ctx, CodeContextOptions{Cwd: "/tmp"})
	if err != nil || cc.ID != "ctx1" || cc.Cwd != "/tmp" {
		t.Fatalf("CreateCodeContext = %+v, %v", cc, err)
	}
	if b := f.lastBody(); b["cwd"] != "/tmp" || b["language"] != "" {
		t.Errorf("context body %v", b)
	}
	if _, err := sb.RunCode(ctx, "1+1", RunCodeOptions{Context: cc}); err != nil {
		t.Fatal(err)
	}
	if b := f.lastBody(); b["context_id"] != "ctx1" || b["language"] != nil || b["env_vars"] != nil {
		t.Errorf("body with a context %v", b)
	}
	list, err := sb.ListCodeContexts(ctx)
	if err != nil || len(list) != 2 || list[1].Language != "javascript" {
		t.Errorf("ListCodeContexts = %+v, %v", list, err)
	}
	if err := sb.RestartCodeContext(ctx, "ctx1"); err != nil {
		t.Errorf("RestartCodeContext: %v", err)
	}
	if err := sb.RemoveCodeContext(ctx, "ctx1"); err != nil {
		t.Errorf("RemoveCodeContext: %v", err)
	}
	for _, err := range []error{sb.RemoveCodeContext(ctx, "nope"), sb.RestartCodeContext(ctx, "nope")} {
		var apiErr *APIError
		if !errors.Is(err, ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Message != "Context nope not found" {
			t.Errorf("missing context: %v", err)
		}
	}
	if _, err := sb.RunCode(ctx, "1+1", RunCodeOptions{Language: "python", Context: cc}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Language and Context: %v, want ErrInvalid", err)
	}
}

// TestRunCodeErrors: statuses and broken streams are Go errors that
// errors.Is classifies; a timeout is ErrTimeout and DeadlineExceeded.
func TestRunCodeErrors(t *testing.T) {
	_, sb := newCIServer(t)
	cases := []struct {
		code string
		want []error
		not  error
		msg  string
	}{
		{"missing context", []error{ErrNotFound}, ErrServer, "Context nope not found"},
		{"bad request", []error{ErrInvalid}, ErrNotFound, "Only one of context_id"},
		{"gone", []error{ErrNotFound}, ErrServer, "The sandbox was not found"},
		{"port closed", []error{ErrServer}, ErrNotFound, "port is not open"},
		{"crash", []error{ErrServer}, ErrNotFound, "kernel exploded"},
		{"garbage", nil, ErrServer, "reading the execution stream"},
		{"sleep", []error{ErrTimeout, context.DeadlineExceeded}, ErrNotFound, "after 200ms"},
	}
	for _, tc := range cases {
		t.Run(tc.code, func(t *testing.T) {
			ex, err := sb.RunCode(t.Context(), tc.code, RunCodeOptions{Timeout: 200 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("RunCode = %v, want an error with %q", err, tc.msg)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("%v is not %v", err, w)
				}
			}
			if errors.Is(err, tc.not) {
				t.Errorf("%v is also %v", err, tc.not)
			}
			if tc.code == "sleep" && (ex == nil || !slices.Equal(ex.Logs.Stdout, []string{"started\n"})) {
				t.Errorf("a run cut by its timeout keeps what arrived: %+v", ex)
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := sb.RunCode(ctx, "sleep", RunCodeOptions{}); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Errorf("a cancelled run = %v, want context.Canceled", err)
	}
}
