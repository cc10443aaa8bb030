package server

import (
	"context"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/store"
)

// CreateKey stores a new key and returns its secret, which is shown once.
func CreateKey(ctx context.Context, st store.Store, spec apikey.Spec) (string, error) {
	secret, rec, err := apikey.Create(spec)
	if err != nil {
		return "", err
	}
	return secret, st.CreateAPIKey(ctx, rec)
}

// StoreKey records a secret chosen elsewhere (WARREN_API_KEY) as spec
// describes it.
func StoreKey(ctx context.Context, st store.Store, secret string, spec apikey.Spec) error {
	return st.CreateAPIKey(ctx, apikey.Record(secret, spec))
}
