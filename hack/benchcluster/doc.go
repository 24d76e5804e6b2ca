// Command benchcluster runs the same Jobs on a real control plane (hack/cluster.sh up:
// etcd, kube-apiserver and kwok on this machine) once under the Kubernetes Job
// controller (kube-controller-manager --controllers=job) and once under jobkit's
// client-go controller (jobkit-clientgo, through spec.managedBy), interleaved, with the
// same client QPS and burst, and prints one Markdown table.
//
//	benchcluster --kcm BIN --jobkit BIN [--kubeconfig FILE] [--cluster-dir DIR]
//	             [--cases nonindexed-100,indexed-100,...] [--qps 20/30,500/1000]
//	             [--rounds 1] [--timeout 20m] [--smoke] [--profile DIR]
//	             [--kcm-content-type T] [--jobkit-content-type T] [--jobkit-args=...]
//	             [--controllers kcm,jobkit|kcm|jobkit]
//
// Each run starts the controller under test as a child process, waits until its caches
// have synced, then takes the first snapshot, creates the Jobs (16 create calls at a
// time), waits for their finished condition (Complete or Failed), lets one second
// pass and takes the second:
//
//   - time: from the first create call to the moment the last Job's finished
//     condition is seen through a watch; with several Jobs, also the p50 and p99 over
//     the Jobs of each one's time from its own create call to its finished condition;
//   - API requests: the difference of kube-apiserver's apiserver_request_total between
//     the snapshots, by verb and resource, without kwok's own (pods/status, nodes,
//     leases) and the benchmark's own (its Job creates and its watch);
//   - controller CPU: user plus system seconds between the snapshots, from
//     /proc/PID/stat; peak RSS: VmHWM from /proc/PID/status (the child process lives
//     for one run only, so the peak is the run's). kube-apiserver's, etcd's and
//     kwok's CPU seconds over the same interval say what else the machine was doing;
//   - watch events: the difference of kube-apiserver's
//     apiserver_watch_cache_events_received_total for pods and Jobs, one per change
//     of an object: what each controller's informers received;
//   - syncs: the controller's job_controller_job_syncs_total at the end (both export
//     it; kube-controller-manager serves /metrics on its secure port, which the
//     benchmark allows without authorization).
//
// --controllers kcm or jobkit runs one of them alone (to finish a pair whose other
// half ran before, when a run outlasted --timeout).
// With several --rounds, the table shows the median of each figure over the rounds.
// --profile DIR keeps Go CPU profiles (5 s chunks) and a heap profile of the
// controller and of kube-apiserver for every run, and prints the controller's CPU by
// part: the samples sorted by the frames on their stacks into API requests, watch
// decode, HTTP/2 and TLS reads, events, syncs, informers, garbage collection and the
// Go scheduler (cpuParts, first match wins), with the parts any client-go controller
// spends on the same watch events summed as the floor. The controllers' own event
// handlers (the Job controller's addPod, updatePod, ..., jobkit's onPod and onJob)
// are a part of their own, and a second table divides them, and them with the rest
// of the informers, by the watch events: the CPU per event. That table also states
// issue 37's goals for jobkit against the Job controller (time and writes no more,
// controller CPU at most 0.8x, peak RSS at most 0.6x), met or not on the medians.
//
// Cases: nonindexed-N, indexed-N, failures-N and small-JxN (J Jobs of N pods each,
// created at once), up to 10,000 Jobs and 100,000 pods in all; hack/cluster.sh's
// kwok nodes take a million pods each.
// Both controllers talk protobuf to the API server unless --kcm-content-type or
// --jobkit-content-type says application/json.
//
// Then it checks what the Jobs' status says against what the case expects (succeeded
// and failed counts, the finished condition's type and reason, no pod left holding the
// tracking finalizer), stops the controller and deletes the Jobs and their pods before
// the next run. A failed check fails the command (exit status 1) after the table.
//
// --smoke runs one small Job under each controller at the default QPS: the quick check
// that the control plane and both controllers work.
//
// # Chaos
//
//	benchcluster chaos --jobkit BIN [--cluster-dir DIR] [--cluster-script hack/cluster.sh]
//	                   [--seed N] [--jobs 56] [--kills 24] [--min-gap 500ms] [--max-gap 4s]
//	                   [--restart-apiserver=true] [--qps 50/100] [--timeout 10m] [--smoke]
//
// runs Jobs of every shape in turn (complete, retry-index: backoffLimitPerIndex with
// indexes failing once, fail-index: podFailurePolicy FailIndex, fail-job:
// podFailurePolicy FailJob, backoff: every pod fails, suspend: suspended while running
// and resumed, delete: deleted while running, its pods then deleted as the garbage
// collector would), Indexed or not, sizes, run times and moments drawn from the seed,
// under jobkit-clientgo, which it kills with SIGKILL --kills times (each after
// --min-gap to --max-gap from its start, drawn from the seed) and starts again,
// restarting kube-apiserver once halfway through. kwok fails the pods the Jobs' shapes
// ask for (hack/cluster/kwok.yaml's annotations). A watch of the pods and Jobs records
// their history (resuming across the restart, listing again when its resourceVersion
// is too old). Once every Job has finished or is gone and no pod holds the tracking
// finalizer (or after --timeout), it stops the controller and checks: each Job's
// finished condition is the one its shape asks for; its succeeded, failed and
// completedIndexes equal what its pods' history says (a pod counts once, when it
// finishes or is deleted still holding the finalizer) and, for the shapes that fix
// them, the exact figures; no index has two succeeded pods; no pod was created after
// its Job finished (by etcd revision); no pod holds the finalizer or is left running.
// It prints the seed, every kill and restart, and the checks; --seed N runs the same
// Jobs and kill moments again (the interleaving with the processes is the machine's).
// --smoke: one Indexed Job of 100 pods, one kill once half of its pods exist, no
// restart of kube-apiserver, at 20/30 (the test command's smoke, make cluster-smoke).
//
// # Chaos for groups
//
//	benchcluster chaos ... --jobset BIN --group-crds FILE,FILE [--groups 18] [--group-kills 24]
//
// then runs --groups JobSets (a leader of one child and 1 to 4 workers, children
// Indexed with backoffLimit 0), the shapes in turn: recreate and blocking (a worker
// child fails at the group's first 1 to 3 attempts, under maxRestarts 2 with
// Recreate or BlockingRecreate: 3 fails the group, ReachedMaxRestarts), restart-job
// (a RestartJob rule on the workers, the worker failing 1 or 2 times), depends-on
// (the workers depend on the leader, Ready or Complete), success-any (success policy
// Any on the leader; the workers would run 10 minutes), suspend (suspended while
// running, resumed), in-place (restartStrategy InPlaceRestart: the driver plays the
// pods' agents as TestInPlaceRestartOnTheAPIServer does, moving the barrier to
// attempt 1), scale (the workers' replicas changed while running) and fail-group (a
// worker fails once, a FailJobSet rule fails the group: FailJobSetFailurePolicyAction). BIN is
// examples/jobset/upstream's jobset-controller, one process per API with
// --child-managed-by jobkit-clientgo's and --feature-gates=InPlaceRestart=true: every shape but scale
// on the example's API (jobset.examples.jobkit.dev: RestartJob and per-child
// counters, which JobSet v0.11's API lacks), scale on JobSet's (jobset.x-k8s.io,
// whose CRD lets replicas change; the example's refuses any change of
// replicatedJobs). kwok fails the pods the plan says (kwok.jobkit.dev/fail-job-index
// and fail-restarts in hack/cluster/kwok.yaml); the driver plays the garbage
// collector (the pods of a Job deleted in the foreground, then its finalizer;
// orphaned pods). jobkit-clientgo and the JobSet controllers are killed --group-kills
// times, one drawn each time, and started again; kube-apiserver is restarted once.
// At the end, for each group: exactly one finished condition, the one its plan asks
// for, and terminalState the same; restarts and restartsCountTowardsMax (or, under
// RestartJob, jobRestarts and jobRestartsCountTowardsMax) equal both the failures
// kwok was told to cause and the pods kwok failed that the watch saw (a running pod
// deleted ends with 137 and is none), and never went down; no child created twice,
// none after the group finished, and under BlockingRecreate none before the old
// attempt was gone (by etcd revision);
// the children left are of the current attempts only, within the replicas, finished
// (Complete in a completed group); dependsOn: no worker created before the leader
// was ready or complete (by etcd revision); in place: the barrier at previous 0,
// current 1, no child or pod replaced; no pod holds the tracking finalizer or is left
// running. --smoke runs one recreate group (one failure, one restart) and kills each
// of its two controllers once; --jobs 0 runs the groups alone.
// # Lifecycle families
//
//	benchcluster families --kcm BIN --jobkit BIN [--cluster-dir DIR]
//	                      [--families all|complete-nonindexed,...] [--rounds 1]
//	                      [--timeout 1m] [--controllers kcm,jobkit] [--smoke]
//
// plays the histories of the latency model's TestFamilyWrites
// (reconcile/reconciletest/families_test.go) on the control plane, a Job of 4 pods
// each, under the kube-controller-manager and under jobkit-clientgo, interleaved, at
// 500/1000 QPS: complete NonIndexed and Indexed, retries with backoff,
// backoffLimitPerIndex, podFailurePolicy FailJob, FailIndex and Ignore, successPolicy,
// suspend and resume, deletion while running, a released pod, a parallelism change,
// activeDeadlineSeconds (familycases.go). kwok starts the pods (Running and ready at
// once; their run-for is an hour) and stops the deleted ones; the benchmark ends the
// others through pods/status as their kubelet would, patches, deletes or relabels
// as the family says, and before each step waits for what the controller must have
// done (a count in the Job's status, a pod released), so both controllers see the same
// history. Once the Job is finished (or gone) and no pod holds the tracking
// finalizer, it waits until the controller's writes have stopped for 2 s and counts
// them from apiserver_request_total by kind (pod creates, pod patches, pod deletes,
// Job status, events), without its own (a Job patched or deleted, a pod relabelled
// or deleted as the garbage collector would). Every run keeps the Job's status as a
// watch saw it change (DIR/logs/families-*/NAME-CONTROLLER.status). The table
// says, family by family, whether jobkit wrote no more of any kind; the command fails
// when it wrote more. --smoke: podFailurePolicy FailJob, one round (the test
// command's smoke).
//
// # Groups
//
//	benchcluster groups --kcm BIN [--jobset BIN] [--jobkit BIN --jobkit-jobset BIN]
//	                    [--trainingjob BIN] [--crds FILE,...] [--cluster-dir DIR]
//	                    [--cases leader-64,group-100x10,restart-1000] [--sides jobset,jobkit,owner]
//	                    [--qps 500/1000] [--rounds 1] [--timeout 15m]
//
// runs groups of roles under three sides, one at a time, interleaved: jobset
// (JobSet's own controller, hack/cluster-bins.sh --jobset, with the kube-controller-
// manager's Job controller), jobkit (examples/jobset/upstream's controller with --api
// jobset.x-k8s.io, its child Jobs handed to jobkit-clientgo through spec.managedBy)
// and owner (examples/trainingjob's controller: one owner of the roles' pods, no child
// Jobs). A kube-controller-manager running only its garbage collector runs under every
// side (both JobSet controllers delete an old attempt's child Jobs with foreground
// propagation, which only the garbage collector finishes) and is measured apart.
// JobSet's controller runs from a configuration file without cert-controller, its
// webhook server on 127.0.0.1 with a self-signed certificate and no webhook
// registered: the JobSets are written with every default JobSet's webhook would set.
// Cases: leader-64 (a leader Job of one pod and a worker Job of 64, to completion; the
// owner: 64 workers and a launcher), group-100x10 (100 child Jobs of 10 pods; the
// owner: 1,000 workers), restart-1000 (100 child Jobs of 10 pods, maxRestarts 1,
// backoffLimit 0: once every pod runs, the benchmark fails worker 0 of the first Job
// as its kubelet would and measures the time until every pod of attempt 1 runs; the
// owner: 1,000 workers and a launcher, maxRestarts 1), restart-4x5 (the same, small).
// Each run measures the time, the sides' API writes by verb and resource, each
// process's CPU seconds and peak RSS, kube-apiserver's CPU, then reads the group's
// status, its child Jobs and its pods once they have settled; the table shows the
// ratios to JobSet's side and whether jobkit's facts equal JobSet's (the command
// fails when they differ).
//
// # Queued by Kueue
//
//	benchcluster queued --kueue BIN [--kcm BIN] [--jobkit BIN] [--trainingjob BIN]
//	                    [--crds FILE,...] [--cluster-dir DIR] [--owners 50] [--pods 20]
//	                    [--admitted 10] [--sides kcm,jobkit,owner] [--qps 500/1000]
//	                    [--rounds 1] [--timeout 15m]
//
// queues --owners owners of --pods pods (one CPU each) through one ClusterQueue whose
// CPU quota admits --admitted owners at a time (a ResourceFlavor, the ClusterQueue, a
// LocalQueue), under Kueue's manager (hack/cluster-bins.sh --kueue) and three sides,
// interleaved: kcm (batch/v1 Jobs under the kube-controller-manager's Job controller,
// queued by Kueue's built-in Job integration), jobkit (the same Jobs under
// jobkit-clientgo through spec.managedBy) and owner (TrainingJobs under
// examples/kueue's trainingjob-controller --kueue, which runs Kueue's job reconciler
// for the kind; Kueue's manager lists it as an external framework and only admits).
// Kueue's manager runs from a configuration file without internal certificate
// management, its webhook server on 127.0.0.1 with a self-signed certificate and no
// webhook registered, so the owners are created as its webhook would leave them:
// suspended, with the queue-name label. Its main reads a metrics certificate from
// /etc/kueue/metrics/certs and parses the server's version, so it runs in a mount
// namespace of its own with an overlay on /etc that adds the certificate (unshare -m:
// root) and talks to kube-apiserver through a loopback proxy that reports the
// unstamped version as vMAJOR.MINOR.0 (queuedproxy.go). Each run measures the time
// until every owner finished, the admissions per second (each Workload's Admitted
// condition seen through a watch), the most Workloads admitted at once, the writes by
// verb and resource, the CPU seconds and peak RSS of Kueue's manager and of the side's
// controller, kube-apiserver's CPU; it fails when an owner did not complete, a
// Workload was not admitted, the quota was exceeded or a pod did not succeed.
package main
