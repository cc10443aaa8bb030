package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// AWSKeys are the keys of an AWS identity allowed to pull from ECR.
type AWSKeys struct {
	AccessKeyID     string
	SecretAccessKey string
	Region          string
}

// gcpUser is the username Google's registries (Artifact Registry, GCR)
// take with a service account's JSON key as the password.
const gcpUser = "_json_key"

// GCPAuth logs in to a Google registry with a service account's JSON key.
func GCPAuth(serviceAccountJSON string) (*Auth, error) {
	var key struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
	}
	if err := json.Unmarshal([]byte(serviceAccountJSON), &key); err != nil {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("the GCP service account key is not JSON: %v", err))
	}
	if key.Type != "service_account" || key.ClientEmail == "" {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, `the GCP service account key needs "type": "service_account" and a "client_email"`)
	}
	return &Auth{Username: gcpUser, Password: serviceAccountJSON}, nil
}

var awsRegion = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+-[0-9]+$`)

// ecrEndpoint is where GetAuthorizationToken goes: the AWS SDKs' endpoint
// variables when set (an ECR-compatible service, or a test's), else ECR's
// public endpoint for the region.
func ecrEndpoint(region string) string {
	for _, v := range []string{"AWS_ENDPOINT_URL_ECR", "AWS_ENDPOINT_URL"} {
		if u := os.Getenv(v); u != "" {
			return strings.TrimSuffix(u, "/") + "/"
		}
	}
	return "https://api.ecr." + region + ".amazonaws.com/"
}

// ecrAuth trades AWS keys for an ECR registry login, as `aws ecr
// get-login-password` does: a signed GetAuthorizationToken call whose token
// decodes to "AWS:<password>", valid for 12 hours (one pull).
func (p *Puller) ecrAuth(ctx context.Context, k *AWSKeys) (*Auth, error) {
	if k.AccessKeyID == "" || k.SecretAccessKey == "" {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, "AWS registry credentials need an access key id and a secret access key")
	}
	if !awsRegion.MatchString(k.Region) {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("AWS region %q is not a region name such as us-east-1", k.Region))
	}
	body := []byte("{}")
	endpoint := ecrEndpoint(k.Region)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("ECR endpoint %s: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken")
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "ecr", k.Region, time.Now()); err != nil {
		return nil, fmt.Errorf("signing the ECR request: %w", err)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: p.roundTripper()}
	res, err := client.Do(req)
	if err != nil {
		return nil, errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("cannot reach ECR at %s: %v", endpoint, err))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("reading ECR's answer: %v", err))
	}
	if res.StatusCode != http.StatusOK {
		return nil, ecrError(res.StatusCode, data)
	}
	var out struct {
		AuthorizationData []struct {
			AuthorizationToken string `json:"authorizationToken"`
		} `json:"authorizationData"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.AuthorizationData) == 0 {
		return nil, errdefs.New(errdefs.ErrUnavailable, "ECR answered without an authorization token")
	}
	raw, err := base64.StdEncoding.DecodeString(out.AuthorizationData[0].AuthorizationToken)
	user, pass, ok := strings.Cut(string(raw), ":")
	if err != nil || !ok {
		return nil, errdefs.New(errdefs.ErrUnavailable, "ECR's authorization token is not user:password in base64")
	}
	return &Auth{Username: user, Password: pass}, nil
}

// ecrError classifies an AWS JSON error answer ({"__type", "message"}).
func ecrError(status int, data []byte) error {
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &e)
	kind := e.Type[strings.LastIndex(e.Type, "#")+1:]
	msg := fmt.Sprintf("ECR refused the AWS keys (%d %s): %s", status, kind, e.Message)
	if status == http.StatusForbidden || status == http.StatusUnauthorized ||
		strings.Contains(kind, "Unrecognized") || strings.Contains(kind, "Signature") || strings.Contains(kind, "AccessDenied") {
		return errdefs.New(errdefs.ErrPermissionDenied, msg)
	}
	return errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("ECR failed (%d %s): %s", status, kind, e.Message))
}
