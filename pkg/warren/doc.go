// Package warren is the Go SDK for warren, the self-hosted sandbox server
// that speaks E2B's protocol. It finds the server as E2B's SDKs do
// (E2B_API_URL, E2B_API_KEY, E2B_SANDBOX_URL, E2B_DOMAIN), takes a
// context.Context on every call, and returns errors that errors.Is
// classifies (ErrNotFound, ErrRateLimited, ...).
//
// The REST calls go through the client generated from warren's API
// description (github.com/warren-sandbox/warren/api/rest), so the SDK,
// the server and the document cannot drift apart.
//
// It covers the sandbox lifecycle (create, connect, which also resumes,
// list, info, timeout, pause, snapshots, kill), commands, files and PTYs
// through envd (Sandbox.Commands, Files, Pty), the code interpreter of
// code-interpreter-v1 sandboxes (Sandbox.RunCode and code contexts, rich
// results and charts included), and templates: builds from a Dockerfile
// (Client.BuildDockerfile) or step by step, waiting with the build's log,
// tags and deletion.
package warren
