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
package main
