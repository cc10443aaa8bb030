package testutil

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// ECRKeys are the one identity a FakeECR accepts, and the registry login
// it hands out.
type ECRKeys struct {
	AccessKeyID, SecretAccessKey, Region string
	// User and Password are the registry login GetAuthorizationToken returns.
	User, Password string
}

// FakeECR stands in for ECR's API, which tests cannot reach: on loopback,
// it checks each request's SigV4 signature against k as AWS would and
// answers GetAuthorizationToken with k's registry login. It returns the
// endpoint URL (for AWS_ENDPOINT_URL_ECR).
func FakeECR(t testing.TB, k ECRKeys) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"UnknownOperationException","message":"unknown operation"}`)
			return
		}
		if !k.validSignature(r, body) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"com.amazon.coral.service#UnrecognizedClientException","message":"The security token included in the request is invalid."}`)
			return
		}
		token := base64.StdEncoding.EncodeToString([]byte(k.User + ":" + k.Password))
		fmt.Fprintf(w, `{"authorizationData":[{"authorizationToken":%q,"expiresAt":1.7E9,"proxyEndpoint":"https://registry.invalid"}]}`, token)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// validSignature signs a copy of r (its signed headers only) with the known
// secret at r's own time and compares the two signatures.
func (k ECRKeys) validSignature(r *http.Request, body []byte) bool {
	authz := r.Header.Get("Authorization")
	scope := fmt.Sprintf("Credential=%s/", k.AccessKeyID)
	if !strings.Contains(authz, scope) || !strings.Contains(authz, "/"+k.Region+"/ecr/aws4_request") {
		return false
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return false
	}
	_, signed, _ := strings.Cut(authz, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		return false
	}
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "x-amz-date" && h != "content-length" {
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "ecr", k.Region, when); err != nil {
		return false
	}
	return again.Header.Get("Authorization") == authz
}
