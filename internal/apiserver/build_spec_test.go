package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/wire"
)

// TestBuildStartMatchesWire holds the build spec the SDK sends (the
// generated rest.BuildStart) to the one startBuild decodes and the builder
// runs (wire.BuildStart): a request with every field set must cross in
// either direction without an unknown field and come back as the same
// JSON. The fields are filled by reflection, so a field added on one side
// only fails here.
func TestBuildStartMatchesWire(t *testing.T) {
	t.Parallel()
	t.Run("rest to wire", func(t *testing.T) {
		t.Parallel()
		var from rest.BuildStart
		fillAll(t, reflect.ValueOf(&from).Elem(), new(int))
		roundTrip(t, &from, &wire.BuildStart{})
	})
	t.Run("wire to rest", func(t *testing.T) {
		t.Parallel()
		var from wire.BuildStart
		fillAll(t, reflect.ValueOf(&from).Elem(), new(int))
		roundTrip(t, &from, &rest.BuildStart{})
	})
}

// roundTrip decodes from's JSON into to, refusing fields to lacks, and
// checks that to encodes to the same JSON: nothing dropped or changed.
func roundTrip(t *testing.T, from, to any) {
	t.Helper()
	sent, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(sent))
	dec.DisallowUnknownFields()
	if err := dec.Decode(to); err != nil {
		t.Fatalf("decoding %T into %T: %v\n%s", from, to, err, sent)
	}
	back, err := json.Marshal(to)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(sent, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(back, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%T lost or changed fields of %T:\nsent %s\ngot  %s", to, from, sent, back)
	}
}

// fillAll sets every exported field below v to a distinct non-zero value
// (slices and maps get two entries), so omitempty drops nothing and a
// field decoded into its neighbour shows.
func fillAll(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("v%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillAll(t, v.Index(i), n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillAll(t, k, n)
			fillAll(t, e, n)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(t, v.Field(i), n)
			}
		}
	default:
		t.Fatalf("fillAll: no value for a %s (%s); teach it one", v.Kind(), v.Type())
	}
}
