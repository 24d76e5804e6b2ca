// Command benchcluster runs the same Jobs on a real control plane (hack/cluster.sh up:
// etcd, kube-apiserver and kwok on this machine) once under the Kubernetes Job
// controller (kube-controller-manager --controllers=job) and once under jobkit's
// client-go controller (jobkit-clientgo, through spec.managedBy), interleaved, with the
// same client QPS and burst, and prints one Markdown table.
//
//	benchcluster --kcm BIN --jobkit BIN [--kubeconfig FILE] [--cluster-dir DIR]
//	             [--cases nonindexed-100,indexed-100,...] [--qps 20/30,500/1000]
//	             [--rounds 1] [--timeout 20m] [--smoke]
//
// Each run starts the controller under test as a child process, waits until its caches
// have synced, then takes the first snapshot, creates the Jobs, waits for their
// finished condition (Complete or Failed), lets one second pass and takes the second:
//
//   - time: from the create call to the moment the last Job's finished condition is
//     seen through a watch;
//   - API requests: the difference of kube-apiserver's apiserver_request_total between
//     the snapshots, by verb and resource, without kwok's own (pods/status, nodes,
//     leases) and the benchmark's own (its Job creates and its watch);
//   - controller CPU: user plus system seconds between the snapshots, from
//     /proc/PID/stat; peak RSS: VmHWM from /proc/PID/status (the child process lives
//     for one run only, so the peak is the run's). kube-apiserver's and kwok's CPU
//     seconds over the same interval say what else the machine was doing.
//
// Then it checks what the Jobs' status says against what the case expects (succeeded
// and failed counts, the finished condition's type and reason, no pod left holding the
// tracking finalizer), stops the controller and deletes the Jobs and their pods before
// the next run. A failed check fails the command (exit status 1) after the table.
//
// --smoke runs one small Job under each controller at the default QPS: the quick check
// that the control plane and both controllers work (make cluster-smoke).
package main
