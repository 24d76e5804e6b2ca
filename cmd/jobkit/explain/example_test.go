package explain_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
)

// A Job with two completions, one pod running: the controller creates the second.
const exampleInput = `apiVersion: batch/v1
kind: Job
metadata: {name: hello, namespace: default, uid: "1"}
spec:
  completions: 2
  parallelism: 2
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: "1"}}
  template:
    metadata: {labels: {batch.kubernetes.io/controller-uid: "1"}}
    spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}
status: {active: 1, ready: 0, terminating: 0, startTime: "2026-03-01T10:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata:
  name: hello-a
  namespace: default
  uid: "2"
  labels: {batch.kubernetes.io/controller-uid: "1"}
  finalizers: [batch.kubernetes.io/job-tracking]
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: hello, uid: "1", controller: true}]
status: {phase: Running}
`

func ExampleExplain() {
	var objs explain.Objects
	if err := explain.ReadObjects("example.yaml", strings.NewReader(exampleInput), &objs); err != nil {
		fmt.Println(err)
		return
	}
	job, err := objs.Pick("", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := explain.Explain(job, objs.Pods, explain.Options{Now: time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = r.Text(os.Stdout)
	// Output:
	// Job default/hello (NonIndexed, completions 2, parallelism 2)
	// planned as controller "kubernetes.io/job-controller" (spec.managedBy unset) at 2026-03-01T10:01:00Z
	//
	// Pods (1):
	//   active (1):
	//     hello-a
	//
	// Decisions (in execution order):
	//   create a pod: too few active pods
	//
	// Status changes:
	//   status.active: 1 -> 2
	//
	// Next sync: on the next change of the Job or its pods
}

func ExampleParseAssumption() {
	a, err := explain.ParseAssumption("index=3:fail:exit=42")
	fmt.Println(a.Selector, a.N, a.Outcome, a.Exit, err)
	_, err = explain.ParseAssumption("index=3:explode")
	fmt.Println(err)
	// Output:
	// index 3 fail 42 <nil>
	// bad --assume "index=3:explode": unknown outcome "explode" (want succeed, fail, ready or delete)
}

func ExampleSteps() {
	var objs explain.Objects
	if err := explain.ReadObjects("example.yaml", strings.NewReader(exampleInput), &objs); err != nil {
		fmt.Println(err)
		return
	}
	job, _ := objs.Pick("", "hello")
	steps, err := explain.Steps(context.Background(), job, objs.Pods,
		explain.Options{Now: time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)},
		explain.StepOptions{Steps: 10, Kubelet: explain.KubeletSucceed})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = explain.WriteSteps(os.Stdout, steps)
	// Output:
	// step 1 at 2026-03-01T10:01:00Z:
	//   UpdateJobStatus hello: active=2 ready=0 terminating=0 succeeded=0 failed=0
	//   CreatePod hello-rk5qp
	//   after the sync and a kubelet step: status active=2 ready=0 terminating=0 succeeded=0 failed=0; pods Running=1 Succeeded=1
	// step 2 at 2026-03-01T10:01:10Z:
	//   UpdateJobStatus hello: active=1 ready=1 terminating=0 succeeded=0 failed=0 uncounted=1
	//   PatchPod hello-a: remove the tracking finalizer
	//   UpdateJobStatus hello: active=1 ready=1 terminating=0 succeeded=1 failed=0
	//   after the sync and a kubelet step: status active=1 ready=1 terminating=0 succeeded=1 failed=0; pods Succeeded=2
	// step 3 at 2026-03-01T10:01:20Z:
	//   UpdateJobStatus hello: active=0 ready=0 terminating=0 succeeded=1 failed=0 uncounted=1 conditions=SuccessCriteriaMet
	//   PatchPod hello-rk5qp: remove the tracking finalizer
	//   UpdateJobStatus hello: active=0 ready=0 terminating=0 succeeded=2 failed=0 conditions=SuccessCriteriaMet,Complete
	//   after the sync and a kubelet step: status active=0 ready=0 terminating=0 succeeded=2 failed=0 conditions=SuccessCriteriaMet,Complete; pods Succeeded=2
	//   finished: Complete (CompletionsReached)
}

func ExampleControllerFor() {
	job := &batchv1.Job{}
	fmt.Println(explain.ControllerFor(job))
	job.Spec.ManagedBy = ptr.To("example.com/batch")
	fmt.Println(explain.ControllerFor(job))
	// Output:
	// kubernetes.io/job-controller
	// example.com/batch
}
