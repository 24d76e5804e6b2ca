package deploytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CheckMetrics scrapes url, the secure /metrics of a controller deployed from b,
// whose certificate roots verify (nil: any certificate is taken)
// (its --metrics-secure: controller-runtime's authentication and authorization
// filters, which review each token as the controller's service account, with
// b's metrics auth role): without a token it must answer 401; with the token
// of a service account that no role lets get /metrics, 403; with the token of a
// service account bound to b's metrics-reader ClusterRole (as a Prometheus
// is), 200 and metrics in the Prometheus text format. The tokens are real
// ones, issued by the API server of admin (TokenRequest) and reviewed by it
// (TokenReview, SubjectAccessReview). The service accounts live in b's
// namespace, which must exist.
func CheckMetrics(t *testing.T, admin *rest.Config, k8s client.Client, b *Base, url string, roots *x509.CertPool) {
	t.Helper()
	ns := b.Namespace.Name
	reader, denied := "metrics-scraper", "not-a-scraper"
	for _, name := range []string{reader, denied} {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := k8s.Create(t.Context(), sa); err != nil {
			t.Fatal(err)
		}
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: b.MetricsReader.Name + "-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.MetricsReader.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: reader}},
	}
	reg := b.MetricsReader.DeepCopy()
	reg.ResourceVersion = ""
	for _, obj := range []client.Object{reg, binding} {
		if err := k8s.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = k8s.Delete(t.Context(), binding)
		_ = k8s.Delete(t.Context(), reg)
	})
	cs := kubernetes.NewForConfigOrDie(admin)
	token := func(name string) string {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("a token of %s/%s: %v", ns, name, err)
		}
		return tr.Status.Token
	}
	tc := &tls.Config{RootCAs: roots}
	if roots == nil {
		tc.InsecureSkipVerify = true // the self-signed certificate the command made
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	get := func(token string) (int, string, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	var code int
	waitFor(t, "the metrics server at "+url, func() (bool, string) {
		c, _, err := get("")
		if err != nil {
			return false, err.Error()
		}
		code = c
		return true, ""
	})
	if code != http.StatusUnauthorized {
		t.Errorf("GET %s without a token = %d, want %d", url, code, http.StatusUnauthorized)
	}
	if c, body, err := get(token(denied)); err != nil || c != http.StatusForbidden {
		t.Errorf("GET %s as %s/%s (no role) = %d %q, %v; want %d", url, ns, denied, c, body, err, http.StatusForbidden)
	}
	c, body, err := get(token(reader))
	if err != nil || c != http.StatusOK {
		t.Fatalf("GET %s as %s/%s (bound to %s) = %d %q, %v; want %d", url, ns, reader, b.MetricsReader.Name, c, body, err, http.StatusOK)
	}
	if !strings.Contains(body, "# TYPE ") {
		t.Errorf("GET %s = 200 with no metric in the Prometheus text format:\n%s", url, firstLines(body, 10))
	}
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// metricsCert writes, in a directory of its own, tls.crt and tls.key (the keys
// of cert-manager's Secret) of a self-signed certificate for 127.0.0.1, and
// returns the directory and a pool that verifies the certificate.
func metricsCert(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "deploytest metrics"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, block := range map[string]*pem.Block{
		"tls.crt": {Type: "CERTIFICATE", Bytes: der},
		"tls.key": {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return dir, pool
}
