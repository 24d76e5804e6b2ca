//go:build jobsetsuite

package controllertest

// The start of JobSet's integration suite, written for jobkit: where JobSet's
// suite starts its own reconcilers, this one starts jobkit's JobSet
// controller (upstream.Setup) on envtest, with JobSet's CRD from the module
// cache. No Job controller runs: the specs set the child Jobs' status by hand.

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	"github.com/jobkit/jobkit/examples/jobset/upstream"
	"github.com/jobkit/jobkit/examples/jobset/upstream/internal/jobsetmod"
)

// The names JobSet's spec file reads.
var (
	cfg       *rest.Config
	k8sClient client.Client
	testEnv   *envtest.Environment
	ctx       context.Context
	cancel    context.CancelFunc
)

func TestAPIs(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "JobSet's controller suite against jobkit")
}

var _ = ginkgo.BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())
	crds, err := jobsetmod.CRDDir()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	testEnv, cfg, err = testenv.Start(crds)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	cfg.QPS, cfg.Burst = 1000, 2000
	gomega.Expect(jobset.AddToScheme(scheme.Scheme)).To(gomega.Succeed())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = upstream.Setup(mgr, controller.Options{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	go func() {
		defer ginkgo.GinkgoRecover()
		gomega.Expect(mgr.Start(ctx)).To(gomega.Succeed())
	}()
})

var _ = ginkgo.AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if testEnv != nil {
		gomega.Expect(testEnv.Stop()).To(gomega.Succeed())
	}
})

var _ = ginkgo.BeforeEach(func() {
	if reason, ok := SkipReason(ginkgo.CurrentSpecReport().FullText()); ok {
		ginkgo.Skip(reason)
	}
})

// The outcome of every spec, in the file $JOBSET_SUITE_SUMMARY when set
// (hack/jobset-suite.sh prints it whether the suite passes or not: go test
// shows a passing package's output only with -v), on standard output
// otherwise.
var _ = ginkgo.ReportAfterSuite("summary", func(r ginkgo.Report) {
	var outcomes []Outcome
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		o := Outcome{Name: s.FullText(), Duration: s.RunTime}
		switch s.State {
		case types.SpecStatePassed:
			o.State = "passed"
		case types.SpecStateSkipped, types.SpecStatePending:
			if s.Failure.Message == "" {
				continue // left out by -ginkgo.focus or -ginkgo.skip
			}
			o.State, o.Reason = "skipped", s.Failure.Message
		default:
			o.State, o.Reason = "failed", s.State.String()+" at "+s.Failure.Location.String()+": "+strings.Join(strings.Fields(s.Failure.Message), " ")
		}
		outcomes = append(outcomes, o)
	}
	var b strings.Builder
	Summary(&b, outcomes)
	path := os.Getenv("JOBSET_SUITE_SUMMARY")
	if path == "" {
		os.Stdout.WriteString(b.String())
		return
	}
	gomega.Expect(os.WriteFile(path, []byte(b.String()), 0o644)).To(gomega.Succeed())
})
