package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// versionProxy serves kube-apiserver's API on a loopback port of its own, unchanged
// but for GET /version, whose gitVersion it makes a release version when kube-apiserver
// reports none: the local control plane's kube-apiserver is built from the module
// proxy without the build's version stamp (v0.0.0-master+$Format:%H$), and Kueue's
// manager refuses to start when it cannot parse the server's version. The proxy
// answers with the same major and minor and patch 0 (releaseVersion). Every other
// request goes through as it is, with the admin credentials of cfg, watches streamed.
type versionProxy struct {
	server *http.Server
	url    string
}

// startVersionProxy starts the proxy in front of the kube-apiserver of cfg.
func startVersionProxy(cfg *rest.Config) (*versionProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver URL %q: %w", cfg.Host, err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches: every event at once
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != "/version" || resp.StatusCode != http.StatusOK {
			return nil
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		fixed, err := releaseVersion(raw)
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(fixed))
		resp.ContentLength = int64(len(fixed))
		resp.Header.Set("Content-Length", strconv.Itoa(len(fixed)))
		return nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &versionProxy{server: &http.Server{Handler: rp}, url: "http://" + l.Addr().String()}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// kubeconfig writes a kubeconfig of the proxy (no credentials: the proxy adds them)
// into dir and returns its path.
func (p *versionProxy) kubeconfig(dir string) (string, error) {
	path := filepath.Join(dir, "kubeconfig-version-proxy")
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
users:
- name: proxied
  user: {}
contexts:
- name: local
  context:
    cluster: local
    user: proxied
current-context: local
`, p.url)
	return path, os.WriteFile(path, []byte(text), 0o600)
}

func (p *versionProxy) stop() error { return p.server.Close() }

// releaseVersion rewrites a /version answer whose gitVersion is the unstamped
// v0.0.0-... into vMAJOR.MINOR.0 from its major and minor; any other answer is kept.
func releaseVersion(raw []byte) ([]byte, error) {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("/version: %w", err)
	}
	git, _ := v["gitVersion"].(string)
	if !strings.HasPrefix(git, "v0.0.0") {
		return raw, nil
	}
	major, _ := v["major"].(string)
	minor := strings.TrimSuffix(fmt.Sprint(v["minor"]), "+")
	if _, err := strconv.Atoi(major); err != nil {
		return nil, fmt.Errorf("/version: gitVersion %q and major %q: no release version to report", git, major)
	}
	if _, err := strconv.Atoi(minor); err != nil {
		return nil, fmt.Errorf("/version: gitVersion %q and minor %q: no release version to report", git, minor)
	}
	v["gitVersion"] = "v" + major + "." + minor + ".0"
	return json.Marshal(v)
}
