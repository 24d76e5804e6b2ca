package deploytest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/internal/scenarios"
)

// Timeout bounds each wait of CheckRBAC.
const Timeout = 60 * time.Second

// Rule is one verb on one resource, the unit CheckRBAC takes out of a role.
type Rule struct {
	Group, Resource, Verb string
}

// Forbidden is the part of the API server's Forbidden message that names r.
func (r Rule) Forbidden() string {
	return fmt.Sprintf("cannot %s resource %q in API group %q", r.Verb, r.Resource, r.Group)
}

// Controller is one command under CheckRBAC.
type Controller struct {
	// Name is the command's name, its directory under dist/ (hack/deploy).
	Name string
	// Base is the command's rendered config/default.
	Base *Base
	// Helper names the test function of the command's package that calls
	// RunCommand with the command's entry point: CheckRBAC runs the command in a
	// process of its own (the test binary, running only Helper), so that each run
	// has its own metrics registry and controller names, and its log is its
	// output.
	Helper string
	// Create creates, in namespace ns, a workload handed to managedBy (its pods
	// all succeed) and returns a function that reports whether it has completed,
	// with a description of its state.
	Create func(ctx context.Context, k8s client.Client, ns, managedBy string) (func(ctx context.Context) (bool, string, error), error)
	// Needed are rules each of which the command cannot do without: with one of
	// them taken out of the roles, it must log the Forbidden error that names it.
	Needed []Rule
	// Args are the args that hand the command the workloads of namespace ns
	// whose managedBy is managedBy, after the Deployment's; nil means
	// --managed-by=managedBy.
	Args func(ns, managedBy string) []string
}

// CheckRBAC applies the RBAC of c.Base (service account, ClusterRole, leader
// election Role, the metrics auth ClusterRole, their bindings) on the API server
// of admin, checks that it admits every other object of the controller's Helm
// chart with its optional bases on (dist/NAME/chart: the Deployment, the metrics
// Service, the NetworkPolicy, the CRD; a server-side apply, dry run) with no
// warning, the pod template included under the namespace's Pod Security level,
// and runs the command (c.Helper) with the container args of the Deployment (the
// lease namespace and the listen addresses replaced) as the service account, by
// impersonation: the workload must complete with no "forbidden" in the command's
// log, and its /metrics (HTTPS, the Deployment's --metrics-secure, with a
// certificate of the test's in --metrics-cert-path) answer 401
// without a token, 403 to a service account not bound to the metrics-reader
// ClusterRole and 200 to one bound to it (CheckMetrics). Then, for each rule of
// c.Needed, the same with that rule taken out, under a service account of its
// own: the command must log the Forbidden error naming the rule. Each run has a
// namespace of its own for its workload.
func CheckRBAC(t *testing.T, admin *rest.Config, k8s client.Client, c Controller) {
	t.Helper()
	t.Run("generated RBAC", func(t *testing.T) {
		sa := apply(t, k8s, c.Base, "", Rule{})
		admitted(t, admin, c)
		// The certificate of /metrics given as cert-manager's Secret would be
		// (config/certmanager), so that the scrapes verify it.
		certDir, roots := metricsCert(t)
		logs, metricsAddr := runAs(t, admin, c, sa, "deployed", managedByPrefix+"deployed", "--metrics-cert-path="+certDir)
		wl := workload(t, admin, k8s, c, "deployed", managedByPrefix+"deployed")
		waitFor(t, "the workload to complete as "+sa.user(), func() (bool, string) {
			done, state, err := wl(t.Context())
			if err != nil {
				return false, err.Error()
			}
			return done, state
		})
		CheckMetrics(t, admin, k8s, c.Base, "https://"+metricsAddr+"/metrics", roots)
		if lines := logs.matching("forbidden"); len(lines) > 0 {
			t.Errorf("the controller was refused with the generated RBAC:\n%s", strings.Join(lines, "\n"))
		}
	})
	for i, r := range c.Needed {
		t.Run("without "+r.Verb+" "+r.Resource, func(t *testing.T) {
			name := fmt.Sprintf("without-%d", i)
			sa := apply(t, k8s, c.Base, "-"+name, r)
			logs, _ := runAs(t, admin, c, sa, name, managedByPrefix+name)
			wl := workload(t, admin, k8s, c, name, managedByPrefix+name)
			waitFor(t, "a Forbidden error that names "+r.Forbidden(), func() (bool, string) {
				return len(logs.matching(strings.ToLower(r.Forbidden()))) > 0, strings.Join(logs.matching("forbidden"), "\n")
			})
			if done, state, err := wl(t.Context()); err == nil && done {
				t.Errorf("the workload completed without %s: %s", r.Forbidden(), state)
			}
		})
	}
}

// managedByPrefix starts the managedBy names of CheckRBAC's runs.
const managedByPrefix = "deploytest.jobkit.dev/"

// account is the service account a run impersonates.
type account struct{ namespace, name string }

func (a account) user() string { return "system:serviceaccount:" + a.namespace + ":" + a.name }

// apply creates the namespace, service account, roles and bindings of b, every
// name but the namespace's with suffix added, and without rule drop (when
// drop.Verb is set) in either role. It returns the service account.
func apply(t *testing.T, k8s client.Client, b *Base, suffix string, drop Rule) account {
	t.Helper()
	ns, sa := b.Namespace.DeepCopy(), b.ServiceAccount.DeepCopy()
	cr, crb := b.ClusterRole.DeepCopy(), b.ClusterRoleBinding.DeepCopy()
	role, rb := b.Role.DeepCopy(), b.RoleBinding.DeepCopy()
	mr, mrb := b.MetricsAuthRole.DeepCopy(), b.MetricsAuthRoleBinding.DeepCopy()
	sa.Name += suffix
	cr.Name += suffix
	role.Name += suffix
	mr.Name += suffix
	crb.Name += suffix
	rb.Name += suffix
	mrb.Name += suffix
	crb.RoleRef.Name += suffix
	rb.RoleRef.Name += suffix
	mrb.RoleRef.Name += suffix
	for _, subjects := range [][]rbacv1.Subject{crb.Subjects, rb.Subjects, mrb.Subjects} {
		for i := range subjects {
			if subjects[i].Kind == rbacv1.ServiceAccountKind {
				subjects[i].Name += suffix
			}
		}
	}
	if drop.Verb != "" {
		cr.Rules, role.Rules = without(cr.Rules, drop), without(role.Rules, drop)
		if countVerbs(cr.Rules, role.Rules) == countVerbs(b.ClusterRole.Rules, b.Role.Rules) {
			t.Fatalf("no rule of the roles grants %s on %s in group %q", drop.Verb, drop.Resource, drop.Group)
		}
	}
	for _, obj := range []client.Object{ns, sa, cr, crb, role, rb, mr, mrb} {
		obj.SetResourceVersion("")
		if err := k8s.Create(t.Context(), obj); err != nil && !(apierrors.IsAlreadyExists(err) && obj == ns) {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	return account{namespace: sa.Namespace, name: sa.Name}
}

// admitted server-side applies, with dryRun, every
// object of c's Helm chart with its optional bases on, rendered into the
// namespace apply created (Pod Security level restricted), but the
// ServiceMonitor, whose CRD (the Prometheus Operator's) an API server has not
// (TestInstallersAndCharts checks it): the API server must accept each, with no
// warning (a pod template that the namespace's level refuses gets a warning on a
// Deployment; so does an unknown field). The chart's objects are
// config/default's (TestInstallersAndCharts).
func admitted(t *testing.T, admin *rest.Config, c Controller) {
	t.Helper()
	objs, err := RenderChart(c.Name, c.Base.Namespace.Name, map[string]map[string]any{
		"networkPolicy": {"enable": true}, "prometheus": {"enable": true}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(admin)
	w := &warnings{}
	cfg.WarningHandler = w
	k8s, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, u := range objs {
		if u.GetKind() == "ServiceMonitor" {
			continue
		}
		kinds[u.GetKind()] = true
		err := k8s.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.DryRunAll,
			client.ForceOwnership, client.FieldOwner("deploytest"))
		if err != nil {
			t.Errorf("the API server refused %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	for _, k := range []string{"Deployment", "Service", "NetworkPolicy", "ClusterRole", "Role"} {
		if !kinds[k] {
			t.Errorf("the chart of %s renders no %s", c.Name, k)
		}
	}
	if len(w.texts) > 0 {
		t.Errorf("the API server warned about the chart's objects:\n%s", strings.Join(w.texts, "\n"))
	}
}

// warnings is a rest.WarningHandler that keeps the warnings' texts.
type warnings struct {
	mu    sync.Mutex
	texts []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// without returns a copy of rules in which no rule grants r.
func without(rules []rbacv1.PolicyRule, r Rule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, pr := range rules {
		pr = *pr.DeepCopy()
		if slices.Contains(pr.APIGroups, r.Group) && slices.Contains(pr.Resources, r.Resource) {
			pr.Verbs = slices.DeleteFunc(pr.Verbs, func(v string) bool { return v == r.Verb })
		}
		if len(pr.Verbs) > 0 {
			out = append(out, pr)
		}
	}
	return out
}

// countVerbs counts the (group, resource, verb) triples the rules grant.
func countVerbs(sets ...[]rbacv1.PolicyRule) int {
	n := 0
	for _, rules := range sets {
		for _, r := range rules {
			n += len(r.Verbs) * len(r.Resources) * len(r.APIGroups)
		}
	}
	return n
}

// workload creates namespace ns with a kubelet that makes every pod succeed, and
// c's workload for managedBy in it.
func workload(t *testing.T, admin *rest.Config, k8s client.Client, c Controller, ns, managedBy string) func(context.Context) (bool, string, error) {
	t.Helper()
	nsObj := &corev1.Namespace{}
	nsObj.Name = ns
	if err := k8s.Create(t.Context(), nsObj); err != nil {
		t.Fatal(err)
	}
	kubelet := scenarios.NewKubelet(kubernetes.NewForConfigOrDie(admin), ns)
	kubelet.SetPolicy(func(*corev1.Pod) scenarios.Outcome { return scenarios.Succeed() })
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { kubelet.Run(ctx); close(stopped) }()
	t.Cleanup(func() { stop(); <-stopped })
	done, err := c.Create(t.Context(), k8s, ns, managedBy)
	if err != nil {
		t.Fatalf("creating the workload: %v", err)
	}
	return done
}

// waitFor polls cond until it holds, failing the test after Timeout with the last
// explanation cond gave.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %v for %s:\n%s", Timeout, what, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Job is a Controller.Create for a Job controller: an Indexed Job of two
// completions, both at once, handed to managedBy; done once it has the Complete
// condition.
func Job(ctx context.Context, k8s client.Client, ns, managedBy string) (func(context.Context) (bool, string, error), error) {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployed"},
		Spec: batchv1.JobSpec{
			ManagedBy:      ptr.To(managedBy),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Completions:    ptr.To[int32](2),
			Parallelism:    ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			}},
		},
	}
	if err := k8s.Create(ctx, job); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (bool, string, error) {
		got := &batchv1.Job{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return false, "", err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("status %+v", got.Status), nil
	}, nil
}
