# The test command of this repository is `make test` (see README.md).
FUZZTIME ?= 3s
SOAKSEEDS ?= 10000
SOAKFAULTS ?= 0.1
SOAKSEEDS20 ?= 3000
SOAKFAULTS20 ?= 0.2

.PHONY: build-installer jobset-suite test bench fuzz fmt demo soak lint compat tidy release-check latency cluster-up cluster-down cluster-status bench-cluster cluster-smoke chaos image image-smoke

test:
	FUZZTIME=$(FUZZTIME) ./hack/test.sh

# Runs a Job to completion on the in-memory cluster and prints its progress. Pass
# DEMOFLAGS="--kubeconfig ~/.kube/config" to run it on a real cluster.
demo:
	cd examples && go run ./demo $(DEMOFLAGS)

# One install manifest and one Helm chart per controller, rendered from its
# kustomize base (examples/*/config) into dist/NAME/ by hack/deploy: checked in,
# and checked for drift by hack/generate.sh --check (docs/deploy.md).
build-installer:
	go run ./hack/deploy

# JobSet's own integration suite of its controller (test/integration/controller of
# sigs.k8s.io/jobset, read from the Go module cache, never copied) run against jobkit's
# JobSet controller on envtest: every spec PASSED, FAILED or SKIPPED, with the reason of
# each that fails or is skipped (hack/jobset-suite.sh; about 5 minutes). Ginkgo's
# flags pass through JOBSETSUITEFLAGS, e.g. JOBSETSUITEFLAGS=-ginkgo.focus=InOrder.
jobset-suite:
	./hack/jobset-suite.sh $(JOBSETSUITEFLAGS)

# go mod tidy -diff in every module and staticcheck (pinned in hack/tools/go.mod).
lint:
	./hack/lint.sh

# go mod tidy in every module (go.work is ignored by tidy; see CONTRIBUTING.md).
tidy:
	./hack/tidy.sh

# The modules served by a local module proxy as a release tag would publish them; every
# command installed from it and the libraries imported at the Kubernetes floor, offline.
release-check:
	./hack/release-check.sh

# The core built and tested at the newest supported Kubernetes release, the examples
# built at the floor (the core's go.mod is the floor itself).
compat:
	./hack/compat.sh

# Runs Jobs of 100 to 20,000 pods to completion against the in-memory cluster with
# every API call taking a latency L (simulated time, testing/synctest) and prints the
# time to Complete in units of L, the syncs and the API writes per pod, then the time
# from the release of a running pod of an Indexed Job to its replacement, then
# 100 to 10,000 Jobs of 1-10 pods created at once (5 workers; p50, p99 and all
# Complete), then 1 launcher and 64 workers as one owner of roles and as child Jobs
# (writes by kind and by controller, time to Complete), then a group of 10 to 1,000
# units of 8 pods restarted after one failure, both shapes (time from the failure to
# every pod of the new attempt running, writes by kind), then every lifecycle family's
# writes beside the Job controller's for the same history.
latency:
	go test -count=1 -timeout 60m -run 'TestLatencyTable$$|TestLatencyReleaseTable$$|TestLatencyManyJobs$$|TestFamilyWrites$$' ./reconcile/reconciletest -latency.table -v | grep '^|'
	go test -count=1 -timeout 60m -run 'TestRolesVsChildJobs$$|TestGroupRestart$$' ./reconcile/reconciletest -latency.table -v | grep '^|'

bench:
	@for m in $$(./hack/modules.sh); do (cd $$m && go test -run='^$$' -bench=. -benchmem ./...) || exit 1; done

fuzz:
	./hack/fuzz.sh $(FUZZTIME)

# Runs the deterministic fault simulation (package sim) for SOAKSEEDS seeds with
# SOAKFAULTS faults per API call, one worker per CPU, and prints seeds per minute, the
# faults injected by kind and the violations (each with the command that replays it).
# Every fourth seed runs its Job as a custom resource (sim.TaskKind, -sim.owner=mixed).
# Every seed then also runs an owner of two roles through SyncRoles (sim.RunRoles) and a
# group of child Jobs through SyncChildJobs (sim.RunChildJobs): all three shapes.
# A second, shorter run (SOAKSEEDS20 seeds at SOAKFAULTS20) shows regressions that only
# high fault rates reach (issue 25 was found at 0.2).
soak:
	go test -count=1 -timeout 60m ./internal/sim -run 'TestSimulation$$' -sim.seeds=$(SOAKSEEDS) -sim.faults=$(SOAKFAULTS) -sim.report -v
	go test -count=1 -timeout 60m ./internal/sim -run 'TestSimulation$$' -sim.seeds=$(SOAKSEEDS20) -sim.faults=$(SOAKFAULTS20) -sim.report -v

fmt:
	gofmt -w $$(git ls-files --cached --others --exclude-standard '*.go')

# A real control plane on loopback (etcd, kube-apiserver, kwok with fake nodes; see
# hack/cluster.sh), built into ~/.cache/jobkit/cluster when missing.
cluster-up:
	./hack/cluster.sh up

cluster-down:
	./hack/cluster.sh down

cluster-status:
	./hack/cluster.sh status

# The same Jobs under kube-controller-manager's Job controller and under
# jobkit-clientgo on that control plane, interleaved; prints the tables. Pass
# BENCHFLAGS="--cases indexed-5000 --qps 500/1000" to choose; BENCHFLAGS=queued runs
# the queued case instead (50 owners of 20 pods through one Kueue ClusterQueue that
# admits 10 at a time, Kueue's manager built by hack/cluster-bins.sh --kueue),
# BENCHFLAGS=groups the groups of roles, and BENCHFLAGS=families the lifecycle
# families of the latency model's TestFamilyWrites, writes by kind (about 5 minutes;
# BENCHFLAGS="families --rounds 2" for two rounds).
bench-cluster:
	./hack/bench-cluster.sh $(BENCHFLAGS)

# The test command's smoke: one Indexed Job of 100 pods under jobkit-clientgo, killed
# with SIGKILL once halfway and restarted, exact counts at the end, then one JobSet
# restarted once with jobkit-clientgo and the JobSet controller each killed once, then
# one lifecycle family (podFailurePolicy FailJob) under kube-controller-manager and
# jobkit-clientgo, jobkit's writes no more of any kind, on a control plane brought up
# and down for it (about 2 minutes once the binaries are built).
cluster-smoke:
	./hack/bench-cluster.sh --smoke

# The chaos run: 56 Jobs of mixed shapes under jobkit-clientgo, killed with SIGKILL 24
# times and restarted, kube-apiserver restarted once, then the checks against the
# pods' history (about 3 minutes); then 18 JobSets of mixed shapes under the
# example's JobSet controller (both APIs) and jobkit-clientgo, killed 24 times,
# kube-apiserver restarted once, and their checks (about 2 minutes more). A failing
# run prints its seed: rerun it with CHAOSFLAGS="--seed N" (--jobs 0: the groups alone).
chaos:
	./hack/bench-cluster.sh chaos $(CHAOSFLAGS)

# The container image of examples/Dockerfile built without a Docker daemon
# (hack/image.sh): the Dockerfile's go build for linux/amd64 and linux/arm64, FROM
# scratch (CA certificates, /etc/passwd with the non-root user 65532: the distroless
# base cannot be pulled here), assembled by crane (hack/tools) into an OCI layout
# tarball, bin/images/<name>.oci.tar, then its index and configs checked. IMAGE_CMD
# picks the command (default: the Dockerfile's, jobkit-controller-runtime).
image:
	./hack/image.sh

# Runs that image against a control plane of its own (hack/cluster.sh): the image's
# layers unpacked and its entrypoint run under chroot as its user (no container
# runtime here), one Indexed Job of 4 pods to Complete. Needs root.
image-smoke:
	./hack/image-smoke.sh
