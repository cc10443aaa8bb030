package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestOutputLog(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", maxOutputLine+5)
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"lines", []string{"a\nb\n"}, []string{"a", "b"}},
		{"split writes", []string{"hel", "lo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"crlf", []string{"dos\r\n"}, []string{"dos"}},
		{"last line without newline", []string{"x\ntail"}, []string{"x", "tail"}},
		{"long line is split", []string{long + "\n"}, []string{long[:maxOutputLine], "yyyyy"}},
		{"invalid utf-8", []string{"a\xffb\n"}, []string{"a\uFFFDb"}},
		{"empty line kept", []string{"\n"}, []string{""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			o := newOutputLog(slog.New(slog.NewJSONHandler(&buf, nil)), "stderr")
			for _, w := range tc.writes {
				if n, err := o.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			_ = o.Close()
			var got []string
			for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("record %q: %v", line, err)
				}
				if rec["tag"] != "startCmd" || rec["stream"] != "stderr" || rec["level"] != "INFO" {
					t.Fatalf("record %q lacks tag, stream or level", line)
				}
				got = append(got, rec["msg"].(string))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("messages = %q, want %q", clip(got), clip(tc.want))
			}
		})
	}
}

// clip shortens long messages for failure output.
func clip(msgs []string) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		if len(m) > 40 {
			m = m[:20] + "…(" + strconv.Itoa(len(m)) + " bytes)"
		}
		out[i] = m
	}
	return out
}
