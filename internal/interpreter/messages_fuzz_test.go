package interpreter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/warren-sandbox/warren/internal/jupyter"
)

// fuzzMaxLine and fuzzMaxOutput are small stream limits, so the fuzzer
// reaches the splitting and the cut.
const (
	fuzzMaxLine   = 64
	fuzzMaxOutput = 2048
)

// FuzzConverter hands arbitrary kernel messages (any type, any content) to
// the converter that turns them into the /execute stream. Every line the
// client gets must be one JSON object of a known event type; output lines
// respect the line limit, and nothing capped follows the truncation marker.
func FuzzConverter(f *testing.F) {
	for _, s := range [][3]string{
		{"stream", `{"name":"stdout","text":"hello\n"}`, `{"status":"ok"}`},
		{"stream", `{"name":"stderr","text":"` + strings.Repeat("é", 100) + `"}`, `{"status":"aborted"}`},
		{"execute_result", `{"data":{"text/plain":"'x'","image/png":"iVB","application/json":{"a":[1]},"x/y":["a","b"]}}`, `{}`},
		{"display_data", `{"data":{"text/html":null,"e2b/chart":{"type":"bar"}}}`, `{"status":"error","ename":"E"}`},
		{"error", `{"ename":"ValueError","evalue":"bad","traceback":["a","b"]}`, `{"status":"error"}`},
		{"execute_input", `{"execution_count":3}`, `[`},
		{"error", `not json`, `{"status":"error","traceback":"notalist"}`},
	} {
		f.Add(s[0], []byte(s[1]), []byte(s[2]), uint32(0))
	}
	f.Add("stream", []byte(`{"text":"x"}`), []byte(`{"status":"ok"}`), uint32(1<<30))

	f.Fuzz(func(t *testing.T, msgType string, content, reply []byte, dropped uint32) {
		var buf bytes.Buffer
		out := newStream(&buf, nil, fuzzMaxLine, fuzzMaxOutput)
		c := &converter{out: out}
		date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for i := 0; i < 3; i++ { // repeated, to reach the output cap
			c.handle(&jupyter.Message{Header: jupyter.Header{MsgType: msgType, Date: date}, Content: content, Dropped: uint64(dropped)})
		}
		c.reply(&jupyter.Message{Header: jupyter.Header{MsgType: "execute_reply"}, Content: reply})
		c.close()
		c.handle(&jupyter.Message{Header: jupyter.Header{MsgType: "stream"}, Content: []byte(`{"text":"late"}`)})
		checkStream(t, buf.Bytes())
	})
}

func checkStream(t *testing.T, data []byte) {
	t.Helper()
	known := map[string]bool{evStdout: true, evStderr: true, evResult: true, evError: true, evCount: true}
	truncated := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", sc.Bytes(), err)
		}
		typ, _ := ev["type"].(string)
		if !known[typ] {
			t.Fatalf("line %q has an unknown type", sc.Bytes())
		}
		text, _ := ev["text"].(string)
		switch {
		case typ == evStdout || typ == evStderr:
			if strings.HasPrefix(text, "[output truncated") {
				truncated = true
				continue
			}
			if text == "late" {
				t.Fatal("a message after close reached the client")
			}
			if truncated {
				t.Fatalf("output %q after the truncation marker", text)
			}
			if utf8.RuneCountInString(text) > fuzzMaxLine {
				t.Fatalf("output line of %d characters, over %d", utf8.RuneCountInString(text), fuzzMaxLine)
			}
		case typ == evResult && truncated:
			t.Fatal("a result after the truncation marker")
		}
	}
	if !bytes.HasSuffix(data, []byte("\n")) && len(data) > 0 {
		t.Fatal("the stream ends mid-line")
	}
}
