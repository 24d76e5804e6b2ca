package explain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Objects are the Jobs and pods read from files.
type Objects struct {
	Jobs []*batchv1.Job
	Pods []*corev1.Pod
	// Ignored counts the objects of other kinds, by kind.
	Ignored map[string]int
}

// ReadObjects reads Jobs and pods from YAML or JSON: several documents separated
// by "---", each a Job, a Pod or a list of them (kind List, JobList or PodList), as
// `kubectl get -o yaml` writes. name names the source in errors. Objects of other
// kinds are counted in Ignored.
func ReadObjects(name string, r io.Reader, into *Objects) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReader(r), 4096)
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		if err := into.add(raw, fmt.Sprintf("%s: document %d", name, doc)); err != nil {
			return err
		}
	}
}

type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

func (o *Objects) add(raw json.RawMessage, where string) error {
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("%s: not a Kubernetes object: %w", where, err)
	}
	switch {
	case tm.Kind == "Job" && tm.APIVersion == "batch/v1":
		job := &batchv1.Job{}
		if err := json.Unmarshal(raw, job); err != nil {
			return fmt.Errorf("%s: Job: %w", where, err)
		}
		o.Jobs = append(o.Jobs, job)
	case tm.Kind == "Pod" && tm.APIVersion == "v1":
		pod := &corev1.Pod{}
		if err := json.Unmarshal(raw, pod); err != nil {
			return fmt.Errorf("%s: Pod: %w", where, err)
		}
		o.Pods = append(o.Pods, pod)
	case strings.HasSuffix(tm.Kind, "List"):
		for i, item := range tm.Items {
			if err := o.add(item, fmt.Sprintf("%s: items[%d]", where, i)); err != nil {
				return err
			}
		}
	case tm.Kind == "":
		return fmt.Errorf("%s: not a Kubernetes object: no kind", where)
	default:
		if o.Ignored == nil {
			o.Ignored = map[string]int{}
		}
		o.Ignored[tm.APIVersion+" "+tm.Kind]++
	}
	return nil
}

// Pick returns the Job to explain: the one named name (in namespace, when not
// empty), or the only Job when name is empty. The error wraps ErrNoJob when there
// is none and names the candidates when the choice is ambiguous.
func (o *Objects) Pick(namespace, name string) (*batchv1.Job, error) {
	var found []*batchv1.Job
	for _, j := range o.Jobs {
		if (name == "" || j.Name == name) && (namespace == "" || j.Namespace == namespace) {
			found = append(found, j)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(o.Jobs) == 0:
		return nil, fmt.Errorf("%w: the input holds no batch/v1 Job (%d pod(s))", ErrNoJob, len(o.Pods))
	case len(found) == 0:
		return nil, fmt.Errorf("%w: job %q not found in the input (it holds %s)", ErrNoJob, qualified(namespace, name), jobNames(o.Jobs))
	default:
		return nil, fmt.Errorf("the input holds %d Jobs (%s): name one", len(found), jobNames(found))
	}
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func jobNames(jobs []*batchv1.Job) string {
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Namespace + "/" + j.Name
	}
	return strings.Join(names, ", ")
}
