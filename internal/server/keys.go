package server

import (
	"context"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/store"
)

// CreateKey stores a new key's hash and returns the key, which is shown once.
func CreateKey(ctx context.Context, st store.Store, name string, admin bool) (string, error) {
	key, err := apikey.Generate()
	if err != nil {
		return "", err
	}
	return key, StoreKey(ctx, st, key, name, admin)
}

// StoreKey records key (of which only the hash and a mask are kept) as
// the key named name.
func StoreKey(ctx context.Context, st store.Store, key, name string, admin bool) error {
	id := apikey.NewID()
	if name == "" {
		name = "key-" + id
	}
	return st.CreateAPIKey(ctx, &store.APIKey{
		ID: id, Name: name, Hash: apikey.Hash(key), Mask: apikey.Mask(key),
		Admin: admin, CreatedAt: time.Now().UTC(),
	})
}
