// Package e2e is warren's end-to-end suite: it starts a real `warren serve`
// once per runtime backend and drives it with the official npm E2B SDK at two
// versions (the latest, which uses the v2 create/connect paths, and 2.50.0,
// which uses the v1 paths). The tests themselves are JavaScript files in sdk/;
// the Go test only builds, starts, checks and stops the server around them.
// See README.md for running the JavaScript tests against any server.
package e2e
