// Package testenv starts a real kube-apiserver and etcd for integration tests,
// through controller-runtime's envtest, with binaries found or built by package
// assets (so a machine without setup-envtest's downloads still runs them) and a
// start timeout long enough for a loaded machine (StartTimeout).
//
//	func TestMain(m *testing.M) {
//		env, cfg, err := testenv.Start("testdata/crds")
//		...
//		code := m.Run()
//		_ = env.Stop()
//		os.Exit(code)
//	}
//
// Start is safe for concurrent use: the binaries are located once per process.
package testenv
