// Package deploytest checks the deployment of an example controller: it renders a
// kustomize base (config/default) with the kustomize pinned in hack/tools, decodes
// the objects into their types (Load, Base), reads the install manifest and
// renders the Helm chart that hack/deploy generates from that base under dist/
// (Installer, RenderChart), and, against a real API server (envtest), has every
// object of the chart admitted (a server-side apply, dry run, no warning: Pod
// Security included), applies the rendered RBAC and runs the controller's command
// as the base's service account through a real sync, scrapes its secure /metrics
// with real tokens (CheckMetrics: 401, 403, 200), then once more with one rule
// taken out of the role, which must fail with Forbidden (CheckRBAC).
//
// It is a test helper of the examples' command packages, not an API. Render runs
// `go tool kustomize`: the first call on a machine builds kustomize (about 6
// minutes with a cold build cache on 2 busy cores, 1.5 with the Kubernetes modules
// compiled already; cached afterwards, a few seconds a call). CheckRBAC
// runs each command in a process of its own (the test binary, running only the
// package's helper test that calls RunCommand) and reads its log from its output.
package deploytest
