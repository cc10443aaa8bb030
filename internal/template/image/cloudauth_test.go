package image

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/testutil"
)

var ecrKeys = testutil.ECRKeys{
	AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", Region: "eu-west-3",
	User: "AWS", Password: "ecr-login-password",
}

func TestPullECR(t *testing.T) {
	host := startRegistry(t, basicAuth(ecrKeys.User, ecrKeys.Password))
	push(t, host+"/ecr:1", imageOf(t, v1.Config{}, layerOf(t, file("f", "x"))),
		remote.WithAuth(&authn.Basic{Username: ecrKeys.User, Password: ecrKeys.Password}))
	t.Setenv("AWS_ENDPOINT_URL_ECR", testutil.FakeECR(t, ecrKeys))
	testKeyID, testSecret := ecrKeys.AccessKeyID, ecrKeys.SecretAccessKey
	tests := []struct {
		name string
		keys AWSKeys
		want error
		msg  string
	}{
		{"right keys", AWSKeys{testKeyID, testSecret, "eu-west-3"}, nil, ""},
		{"wrong secret", AWSKeys{testKeyID, "not-the-secret", "eu-west-3"}, errdefs.ErrPermissionDenied, "ECR refused the AWS keys (400 UnrecognizedClientException)"},
		{"bad region", AWSKeys{testKeyID, testSecret, "eu-west-3/../x"}, errdefs.ErrInvalidArgument, "is not a region name"},
		{"no secret", AWSKeys{testKeyID, "", "eu-west-3"}, errdefs.ErrInvalidArgument, "secret access key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			keys := tc.keys
			img, err := e.p.Resolve(ctx, testTeam, host+"/ecr:1", &Auth{AWS: &keys}, nil)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q lacks %q", err, tc.msg)
			}
			if err == nil && len(img.Layers) != 1 {
				t.Errorf("pulled %d layers", len(img.Layers))
			}
		})
	}
	t.Setenv("AWS_ENDPOINT_URL_ECR", "http://127.0.0.1:1")
	_, err := newEnv(t).p.Resolve(ctx, testTeam, host+"/ecr:1", &Auth{AWS: &AWSKeys{testKeyID, testSecret, "eu-west-3"}}, nil)
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("ECR unreachable: %v, want ErrUnavailable", err)
	}
}

func TestGCPAuth(t *testing.T) {
	key := `{"type":"service_account","client_email":"puller@p.iam.gserviceaccount.com","private_key":"k"}`
	host := startRegistry(t, basicAuth("_json_key", key))
	push(t, host+"/gcp:1", imageOf(t, v1.Config{}, layerOf(t, file("f", "x"))),
		remote.WithAuth(&authn.Basic{Username: "_json_key", Password: key}))
	a, err := GCPAuth(key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newEnv(t).p.Resolve(ctx, testTeam, host+"/gcp:1", a, nil); err != nil {
		t.Fatalf("pull with a service account key: %v", err)
	}
	for _, bad := range []string{"", "not json", `{"type":"authorized_user"}`, `{"type":"service_account"}`} {
		if _, err := GCPAuth(bad); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("GCPAuth(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
}
