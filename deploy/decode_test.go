package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// kinds are the objects warren's manifests may hold, by apiVersion and
// kind; anything else (a typo in either, an API version Kubernetes no
// longer serves) fails the decode.
var kinds = map[string]func() metav1.Object{
	"v1/Namespace":                       func() metav1.Object { return &corev1.Namespace{} },
	"v1/ConfigMap":                       func() metav1.Object { return &corev1.ConfigMap{} },
	"v1/Secret":                          func() metav1.Object { return &corev1.Secret{} },
	"v1/Service":                         func() metav1.Object { return &corev1.Service{} },
	"v1/ServiceAccount":                  func() metav1.Object { return &corev1.ServiceAccount{} },
	"apps/v1/Deployment":                 func() metav1.Object { return &appsv1.Deployment{} },
	"apps/v1/DaemonSet":                  func() metav1.Object { return &appsv1.DaemonSet{} },
	"apps/v1/StatefulSet":                func() metav1.Object { return &appsv1.StatefulSet{} },
	"policy/v1/PodDisruptionBudget":      func() metav1.Object { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/NetworkPolicy": func() metav1.Object { return &networkingv1.NetworkPolicy{} },
}

// object is one decoded manifest document and where it came from.
type object struct {
	source string
	kind   string
	obj    metav1.Object
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decodeAll splits a multi-document YAML stream and decodes each
// non-empty document strictly: an unknown or duplicated field is an error.
func decodeAll(source string, data []byte) ([]object, error) {
	var out []object
	for i, doc := range docSeparator.Split(string(data), -1) {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, i, err)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue // only comments or whitespace
		}
		o, err := decodeOne(fmt.Sprintf("%s#%d", source, i), []byte(doc))
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func decodeOne(source string, doc []byte) (object, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return object{}, fmt.Errorf("%s: %w", source, err)
	}
	key := tm.APIVersion + "/" + tm.Kind
	newObj, ok := kinds[key]
	if !ok {
		return object{}, fmt.Errorf("%s: unexpected object %q", source, key)
	}
	obj := newObj()
	if err := strictUnmarshal(doc, obj); err != nil {
		return object{}, fmt.Errorf("%s: %s: %w", source, tm.Kind, err)
	}
	if obj.GetName() == "" {
		return object{}, fmt.Errorf("%s: %s without a name", source, tm.Kind)
	}
	return object{source: source, kind: tm.Kind, obj: obj}, nil
}

// strictUnmarshal decodes YAML as the API server decodes a request with
// fieldValidation=Strict: duplicate keys, unknown fields and fields whose
// case differs (which encoding/json, and so sigs.k8s.io/yaml's
// UnmarshalStrict, would take) are errors.
func strictUnmarshal(doc []byte, v any) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strictErrs, err := kjson.UnmarshalStrict(js, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

// set indexes decoded objects by kind and name.
type set struct {
	all    []object
	byName map[string]metav1.Object // "Kind/name"
}

func newSet(objs []object) (*set, error) {
	s := &set{all: objs, byName: map[string]metav1.Object{}}
	for _, o := range objs {
		key := o.kind + "/" + o.obj.GetName()
		if _, dup := s.byName[key]; dup {
			return nil, fmt.Errorf("%s: %s defined twice", o.source, key)
		}
		s.byName[key] = o.obj
	}
	return s, nil
}

// each returns the objects of type T.
func each[T metav1.Object](s *set) []T {
	var out []T
	for _, o := range s.all {
		if v, ok := o.obj.(T); ok {
			out = append(out, v)
		}
	}
	return out
}
