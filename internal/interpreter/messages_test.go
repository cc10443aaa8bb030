package interpreter

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestResultEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		main bool
		want map[string]any
	}{
		{"plain number", `{"text/plain":"2"}`, true, map[string]any{"text": "2"}},
		{"single quotes stripped", `{"text/plain":"'abc'"}`, true, map[string]any{"text": "abc"}},
		{"double quotes stripped", `{"text/plain":"\"abc\""}`, true, map[string]any{"text": "abc"}},
		{"only one pair stripped", `{"text/plain":"''abc''"}`, true, map[string]any{"text": "'abc'"}},
		{"mismatched quotes kept", `{"text/plain":"'abc\""}`, true, map[string]any{"text": "'abc\""}},
		{"lone quote kept", `{"text/plain":"'"}`, true, map[string]any{"text": "'"}},
		{"html and markdown", `{"text/html":"<p>","text/markdown":"# h"}`, false, map[string]any{"html": "<p>", "markdown": "# h"}},
		{"images", `{"image/png":"iVB","image/jpeg":"/9j","image/svg+xml":"<svg/>"}`, false, map[string]any{"png": "iVB", "jpeg": "/9j", "svg": "<svg/>"}},
		{"pdf latex javascript", `{"application/pdf":"JVB","text/latex":"$x$","application/javascript":"f()"}`, false, map[string]any{"pdf": "JVB", "latex": "$x$", "javascript": "f()"}},
		{"json data chart", `{"application/json":{"a":1},"e2b/data":{"c":[1]},"e2b/chart":{"type":"bar"}}`, false,
			map[string]any{"json": map[string]any{"a": 1.0}, "data": map[string]any{"c": []any{1.0}}, "chart": map[string]any{"type": "bar"}}},
		{"unknown into extra", `{"application/vnd.plotly.v1+json":{"d":1},"text/x-foo":"bar"}`, false,
			map[string]any{"extra": map[string]any{"application/vnd.plotly.v1+json": map[string]any{"d": 1.0}, "text/x-foo": "bar"}}},
		{"null omitted", `{"text/plain":"x","text/html":null}`, false, map[string]any{"text": "x"}},
		{"nbformat line list joined", `{"text/plain":["a\n","b"]}`, false, map[string]any{"text": "a\nb"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var data map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tc.data), &data); err != nil {
				t.Fatal(err)
			}
			// Compare what the client sees: the event after a JSON round trip.
			b, err := json.Marshal(resultEvent(data, tc.main))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"type": "result", "is_main_result": tc.main}
			for k, v := range tc.want {
				want[k] = v
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}
}

func TestSplitText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		max  int
		want []string
	}{
		{"abc", 0, []string{"abc"}},
		{"abcdef", 4, []string{"abcd", "ef"}},
		{"ééé", 3, []string{"é", "é", "é"}},
		{"\xff\xff\xff\xff", 2, []string{"\xff\xff", "\xff\xff"}},
	}
	for _, tc := range tests {
		if got := splitText(tc.text, tc.max); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitText(%q, %d) = %q, want %q", tc.text, tc.max, got, tc.want)
		}
	}
}
