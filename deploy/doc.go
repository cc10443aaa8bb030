// Package deploy holds warren's deployment files: the image's Dockerfile,
// plain Kubernetes manifests (kubernetes/) and a Helm chart (helm/warren/).
// It has no code of its own; its tests decode every manifest and every
// rendering of the chart strictly into the Kubernetes API types and hold
// them to the cluster roles' contract (docs/cluster.md).
package deploy
