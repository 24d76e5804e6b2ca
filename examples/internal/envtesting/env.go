package envtesting

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
)

// Options says what Start installs and how its clients talk to the API server. The
// zero value starts an API server without CRDs, with client-go's scheme and rate
// limits.
type Options struct {
	// CRDs are the directories or files of CustomResourceDefinition manifests to
	// install; one missing is an error.
	CRDs []string
	// AddToScheme, when not nil, adds the example's API types to the scheme,
	// after client-go's (a runtime.SchemeBuilder's AddToScheme joins several).
	AddToScheme func(*runtime.Scheme) error
	// QPS and Burst, when not zero, replace the client-side rate limits of Config
	// (and so of Client, Clientset and every user that UserWithRole adds).
	QPS   float32
	Burst int
	// Logger becomes controller-runtime's global logger in Main; nil discards.
	Logger logr.Logger
}

// Env is a running API server and what the tests reach it with.
type Env struct {
	// Environment is envtest's, for AddUser and KubeConfig.
	Environment *envtest.Environment
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Scheme holds client-go's types and those of Options.AddToScheme.
	Scheme *runtime.Scheme
	// Client is a client of Config without a cache: it reads what the API server
	// holds now.
	Client client.Client
	// Clientset is client-go's typed clientset of Config.
	Clientset kubernetes.Interface

	cleanups []func()
}

// Start starts an API server with etcd, installs opts.CRDs and builds the scheme
// and the clients. The caller stops it with Stop.
func Start(opts Options) (*Env, error) {
	scheme := runtime.NewScheme()
	err := clientgoscheme.AddToScheme(scheme)
	if err == nil && opts.AddToScheme != nil {
		err = opts.AddToScheme(scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	env, cfg, err := testenv.Start(opts.CRDs...)
	if err != nil {
		return nil, err
	}
	if opts.QPS != 0 {
		cfg.QPS = opts.QPS
	}
	if opts.Burst != 0 {
		cfg.Burst = opts.Burst
	}
	e := &Env{Environment: env, Config: cfg, Scheme: scheme}
	if e.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err == nil {
		e.Clientset, err = kubernetes.NewForConfig(cfg)
	}
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("building the clients: %w", err)
	}
	return e, nil
}

// StartT is Start for one test: it fails the test on error and stops the API
// server in the test's cleanup.
func StartT(t testing.TB, opts Options) *Env {
	t.Helper()
	e, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the API server: %v", err)
		}
	})
	return e
}

// Main is the body of a package's TestMain: it sets controller-runtime's logger,
// starts the API server, calls setup (when not nil; it assigns the package's
// clients and may register cleanups), runs the tests, runs the cleanups and stops
// the API server. It returns the exit code for os.Exit; a failure to start is
// printed to standard error and gives 1.
func Main(m *testing.M, opts Options, setup func(*Env) error) int {
	logger := opts.Logger
	if logger.GetSink() == nil {
		logger = logr.Discard()
	}
	ctrl.SetLogger(logger)
	e, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the API server:", err)
		}
	}()
	if setup != nil {
		if err := setup(e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// Cleanup registers f to run at Stop, before the API server stops; the last
// registered runs first. It is not safe for concurrent use.
func (e *Env) Cleanup(f func()) { e.cleanups = append(e.cleanups, f) }

// Stop runs the cleanups and stops the API server and etcd.
func (e *Env) Stop() error {
	for _, f := range slices.Backward(e.cleanups) {
		f()
	}
	e.cleanups = nil
	return e.Environment.Stop()
}

// UserWithRole installs the ClusterRole of the manifest roleFile, binds it to the
// user name, and returns a configuration that authenticates as that user with the
// rate limits of Config.
func (e *Env) UserWithRole(roleFile, name string) (*rest.Config, error) {
	role := &rbacv1.ClusterRole{}
	if err := ReadYAML(roleFile, role); err != nil {
		return nil, fmt.Errorf("reading the role: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}},
	}
	ctx := context.Background()
	if err := errors.Join(e.Client.Create(ctx, role), e.Client.Create(ctx, binding)); err != nil {
		return nil, fmt.Errorf("installing the role %s: %w", role.Name, err)
	}
	user, err := e.Environment.AddUser(envtest.User{Name: name}, e.Config)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	cfg := user.Config()
	cfg.QPS, cfg.Burst = e.Config.QPS, e.Config.Burst
	return cfg, nil
}

// CreateNamespace creates a namespace named generateName and a random suffix and
// returns its name.
func CreateNamespace(ctx context.Context, c client.Client, generateName string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: generateName}}
	if err := c.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating a namespace %s*: %w", generateName, err)
	}
	return ns.Name, nil
}

// ReadYAML decodes the YAML (or JSON) file path into obj, refusing unknown fields.
func ReadYAML(path string, obj any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}
