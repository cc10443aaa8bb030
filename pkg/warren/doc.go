// Package warren is the Go SDK for warren, the self-hosted sandbox server
// that speaks E2B's protocol: everything E2B's JavaScript and Python SDKs
// do, for Go programs.
//
// # Finding the server
//
// [New] takes a [Config]; fields left empty come from E2B's variables, as
// in the other SDKs: E2B_API_URL, E2B_API_KEY, E2B_SANDBOX_URL (where
// sandbox traffic goes; a warren server serves it on its API address) and
// E2B_DOMAIN. Every call takes a context.Context.
//
//	c, err := warren.New(warren.Config{})
//	sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
//	defer sb.Kill(context.WithoutCancel(ctx))
//	res, err := sb.Commands.Run(ctx, "uname -a", warren.CommandOptions{})
//
// # What it covers
//
//   - The sandbox lifecycle on [Client]: Create, Connect (which resumes a
//     paused sandbox), List, Info, SetTimeout, Pause, Resume, Snapshot,
//     Fork, Metrics, Logs, UpdateNetwork, Kill.
//   - Processes on [Sandbox.Commands]: Run, Start in the background with
//     streamed output and stdin, Exec without a shell, List, Connect to a
//     running process, Signal and Kill. A non-zero exit is a
//     [*CommandExitError] carrying the output.
//   - Terminals on [Sandbox.Pty]: Create, SendInput, Resize, Kill.
//   - Files on [Sandbox.Files]: Read, Write, Upload and Download
//     (streamed), List, Stat, Exists, MakeDir, Rename, Remove, Watch, and
//     signed DownloadURL/UploadURL that work without the API key.
//   - The code interpreter of code-interpreter-v1 sandboxes:
//     [Sandbox.RunCode] with streamed output and rich results (PNG, SVG,
//     HTML, charts as data), and code contexts.
//   - Templates: [Client.BuildDockerfile] with the build's log, the build
//     steps one by one, tags, listing and deletion; imported images. The
//     Dockerfile converter (BuildKit's parser) is the sub-package
//     dockerfile, which a program links in to build from Dockerfiles or
//     the [TemplateBuilder] (import _ ".../pkg/warren/dockerfile"), so
//     that others do not compile it; [Client.BuildSpec] builds a spec it
//     converted.
//   - Usage over time (warren's own): [Client.GetUsage] and, for the
//     admin key, [Client.GetTeamUsage].
//   - Volumes, persistent directories that outlive sandboxes:
//     [Client.CreateVolume], GetVolume, ListVolumes, DeleteVolume; a
//     [Volume]'s content (List, MakeDir, Stat, Exists, UpdateMetadata,
//     Remove, OpenFile, ReadFile, WriteFile) through E2B's content API
//     with the volume's own token; [CreateOptions].VolumeMounts mounts
//     them in a sandbox.
//
// # Names and retries
//
// Client methods are Verb+Noun, with no noun for sandboxes, the Client's
// own resource (Create, List, Kill); reads are Get (one) or List (many);
// settings are option structs. The first names (Info, Webhooks, a Pause
// taking a bool, …) remain for one release, marked Deprecated.
//
// API requests the server refuses for now (429, 503) are retried with
// backoff, honouring Retry-After, when they are safe to repeat: reads,
// PUT and DELETE, and Create, which sends an Idempotency-Key; see
// [RetryOptions].
//
// # Errors
//
// Errors from the server are [*APIError]; errors.Is classifies them as
// [ErrNotFound], [ErrUnauthorized], [ErrInvalid], [ErrConflict],
// [ErrRateLimited], [ErrUnavailable], [ErrTimeout] or [ErrServer], the
// same for the REST API and for envd inside a sandbox.
//
// The REST calls go through the client generated from warren's API
// description (github.com/warren-sandbox/warren/api/rest), so the SDK,
// the server and the document cannot drift apart.
package warren
