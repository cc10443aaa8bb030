// Package archtest holds no code: its test enforces the import rules of
// docs/architecture.md, so a layering mistake fails CI instead of review.
package archtest
