package sqlstore

import (
	"reflect"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// TestTimeCol: a time column reads the same instant whichever database
// wrote it, and NULL reads as the zero time.
func TestTimeCol(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 800, time.UTC)
	tests := []struct {
		name    string
		src     any
		want    time.Time
		wantErr bool
	}{
		{"null", nil, time.Time{}, false},
		{"sqlite text", "2025-03-04T05:06:07.000000800Z", at, false},
		{"sqlite bytes", []byte("2025-03-04T05:06:07.000000800Z"), at, false},
		{"sqlite zero", "0001-01-01T00:00:00.000000000Z", time.Time{}, false},
		{"other zone", "2025-03-04T06:06:07.000000800+01:00", at, false},
		{"postgres nanos", at.UnixNano(), at, false},
		{"driver time", at.In(time.FixedZone("x", 3600)), at, false},
		{"bad text", "yesterday", time.Time{}, true},
		{"bad type", 1.5, time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c timeCol
			err := c.Scan(tt.src)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Scan(%v) error %v, want error %v", tt.src, err, tt.wantErr)
			}
			if err == nil && (!c.t.Equal(tt.want) || c.t.Location() != time.UTC) {
				t.Fatalf("Scan(%v) = %v, want %v in UTC", tt.src, c.t, tt.want)
			}
		})
	}
}

// TestEncoderJSON: empty and nil collections are stored as "{}" or "[]",
// never NULL, so the columns' NOT NULL holds.
func TestEncoderJSON(t *testing.T) {
	tests := []struct {
		name  string
		v     any
		empty string
		want  any
	}{
		{"nil map", map[string]string(nil), "{}", "{}"},
		{"empty map", map[string]string{}, "{}", "{}"},
		{"map", map[string]string{"a": "b"}, "{}", `{"a":"b"}`},
		{"nil list", []string(nil), "[]", "[]"},
		{"list", []string{"x"}, "[]", `["x"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e encoder
			if got := e.json(tt.v, tt.empty); got != tt.want || e.err != nil {
				t.Fatalf("json(%v) = %v, %v; want %v", tt.v, got, e.err, tt.want)
			}
		})
	}
}

// TestDecodeVolumeMounts: rows from before volumes (NULL, empty) and an empty
// list read as nil; a list reads back in order; garbage is an error.
func TestDecodeVolumeMounts(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    []store.VolumeMount
		wantErr bool
	}{
		{"empty", "", nil, false},
		{"json null", "null", nil, false},
		{"empty list", "[]", nil, false},
		{"two", `[{"volumeID":"v1","name":"a","path":"/a"},{"volumeID":"v2","name":"b","path":"/b"}]`,
			[]store.VolumeMount{{VolumeID: "v1", Name: "a", Path: "/a"}, {VolumeID: "v2", Name: "b", Path: "/b"}}, false},
		{"not a list", `{"name":"a"}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeVolumeMounts([]byte(tt.src))
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decodeVolumeMounts(%q) = %#v, %v; want %#v (error %v)", tt.src, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
