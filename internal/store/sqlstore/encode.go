package sqlstore

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// encoder turns record fields into column values, keeping the first
// error so a record's arguments read as one list.
type encoder struct {
	d   Dialect
	err error
}

func (s *Store) enc() *encoder { return &encoder{d: s.d} }

// time is the value of a NOT NULL time column (see Dialect.Time).
func (e *encoder) time(t time.Time) any {
	v, err := e.d.Time(t)
	e.fail(err)
	return v
}

// nullTime is the value of a time column where the zero time is NULL.
func (e *encoder) nullTime(t time.Time) any {
	v, err := e.d.NullTime(t)
	e.fail(err)
	return v
}

func (e *encoder) timePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return e.nullTime(*t)
}

// json encodes a map or list as JSON text, empty ("{}" or "[]") for nil
// or empty so the column is never NULL.
func (e *encoder) json(v any, empty string) any {
	b, err := json.Marshal(v)
	if err != nil {
		e.fail(fmt.Errorf("encoding %T: %w", v, err))
		return nil
	}
	if s := string(b); s == "null" || s == "{}" || s == "[]" {
		return empty
	}
	return string(b)
}

// volumeMounts is the value of a volume_mounts column: NULL for none, so
// that a record without volumes reads the same as one from before them.
func (e *encoder) volumeMounts(m []store.VolumeMount) any {
	if len(m) == 0 {
		return nil
	}
	return e.json(m, "[]")
}

func (e *encoder) fail(err error) {
	if e.err == nil && err != nil {
		e.err = err
	}
}

// timeCol scans a time column of either database: RFC 3339 text (SQLite),
// nanoseconds since the epoch (Postgres), or NULL for the zero time.
type timeCol struct{ t time.Time }

// Scan implements sql.Scanner.
func (c *timeCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		c.t = time.Time{}
	case int64:
		c.t = time.Unix(0, v).UTC()
	case string:
		return c.parse(v)
	case []byte:
		return c.parse(string(v))
	case time.Time:
		c.t = v.UTC()
	default:
		return fmt.Errorf("decoding time from %T", src)
	}
	return nil
}

func (c *timeCol) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("decoding time %q: %w", s, err)
	}
	c.t = t.UTC()
	return nil
}

// ptr is the column as a *time.Time: nil for NULL.
func (c *timeCol) ptr() *time.Time {
	if c.t.IsZero() {
		return nil
	}
	t := c.t
	return &t
}

// jsonCol scans a JSON column of either database (text or jsonb) as bytes.
type jsonCol []byte

// Scan implements sql.Scanner.
func (c *jsonCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c = nil
	case string:
		*c = []byte(v)
	case []byte:
		*c = append((*c)[:0], v...)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("decoding JSON column from %T: %w", src, err)
		}
		*c = b
	}
	return nil
}

// decodeMap returns nil for an empty object, so callers see one shape
// for "no entries".
func decodeMap(b []byte) (map[string]string, error) {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decoding map: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// decodeList returns nil for an empty list.
func decodeList(b []byte) ([]string, error) {
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("decoding list: %w", err)
	}
	if len(l) == 0 {
		return nil, nil
	}
	return l, nil
}

// decodeVolumeMounts returns nil for NULL, an empty string or an empty list.
func decodeVolumeMounts(b []byte) ([]store.VolumeMount, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m []store.VolumeMount
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decoding volume mounts: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// marks returns "?, ?, …" with n marks.
func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// anyArgs turns a list of strings into statement arguments.
func anyArgs(l []string) []any {
	out := make([]any, len(l))
	for i, v := range l {
		out[i] = v
	}
	return out
}
