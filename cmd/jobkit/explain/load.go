package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/owner"
)

// Objects are the Jobs, pods and owners of another kind read from files.
type Objects struct {
	// Owner, when set to a kind other than batch Jobs before reading, makes
	// ReadObjects keep the objects of that kind (its group and kind, any version)
	// in Owners. The zero value keeps none.
	Owner owner.Kind
	Jobs  []*batchv1.Job
	Pods  []*corev1.Pod
	// Owners are the objects of kind Owner, as read (see WorkloadOf).
	Owners []*unstructured.Unstructured
	// Ignored counts the objects of other kinds, by kind.
	Ignored map[string]int
}

// ReadObjects reads Jobs and pods from YAML or JSON: several documents separated
// by "---", each a Job, a Pod or a list of them (kind List, JobList or PodList), as
// `kubectl get -o yaml` writes. name names the source in errors; a YAML syntax
// error names the line of the input (counted from 1 over the whole input, not
// the document) and the document. Objects of other kinds are counted in Ignored.
func ReadObjects(name string, r io.Reader, into *Objects) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		return readJSON(name, data, into)
	}
	for i, d := range yamlDocuments(data) {
		where := fmt.Sprintf("%s: document %d", name, i+1)
		raw, err := yaml.YAMLToJSON(d.text)
		if err != nil {
			return syntaxError(name, i+1, d.line, err)
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
			continue
		}
		if err := into.add(raw, where); err != nil {
			return err
		}
	}
	return nil
}

// readJSON reads a stream of JSON objects.
func readJSON(name string, data []byte, into *Objects) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			off := dec.InputOffset()
			if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
				off = se.Offset
			}
			return fmt.Errorf("%s: line %d (document %d): %w", name, 1+bytes.Count(data[:min(off, int64(len(data)))], []byte("\n")), doc, err)
		}
		if err := into.add(raw, fmt.Sprintf("%s: document %d", name, doc)); err != nil {
			return err
		}
	}
}

// yamlDocument is one document of a YAML stream and the line (from 1) of the
// input where it starts.
type yamlDocument struct {
	text []byte
	line int
}

// yamlDocuments splits a YAML stream at its "---" lines (a separator line may
// carry a comment), as kubectl does; empty documents are left out.
func yamlDocuments(data []byte) []yamlDocument {
	var out []yamlDocument
	cur := yamlDocument{line: 1}
	for i, l := range bytes.SplitAfter(data, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(bytes.TrimRight(l, " \t\r\n"), []byte("---")); ok {
			if rest = bytes.TrimSpace(rest); len(rest) == 0 || rest[0] == '#' {
				if len(cur.text) > 0 {
					out = append(out, cur)
				}
				cur = yamlDocument{line: i + 2}
				continue
			}
		}
		cur.text = append(cur.text, l...)
	}
	if len(cur.text) > 0 {
		out = append(out, cur)
	}
	return out
}

// yamlLine matches the position in a YAML parser's error.
var yamlLine = regexp.MustCompile(`yaml: (?:line (\d+): )?(.*)$`)

// parserErrors are the messages of go.yaml.in/yaml/v2's parser (as opposed to its
// scanner), whose line it reports counted from 0: one line early.
var parserErrors = []string{"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected key", "did not find expected node content",
	"found duplicate %TAG directive", "found duplicate %YAML directive",
	"found incompatible YAML document", "found undefined tag handle"}

// syntaxError is a YAML error of document doc, which starts at line start of the
// input, with its line in the input.
func syntaxError(name string, doc, start int, err error) error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("%s: document %d (from line %d): %w", name, doc, start, err)
	}
	// The library leaves the line out when it is the first, counted from 0.
	n, _ := strconv.Atoi(m[1])
	if slices.Contains(parserErrors, m[2]) {
		n++
	} else if m[1] == "" {
		return fmt.Errorf("%s: document %d (from line %d): %w", name, doc, start, err)
	}
	return fmt.Errorf("%s: line %d (document %d): %s", name, start+n-1, doc, m[2])
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
	case o.Owner.Kind != "" && !isBatchJob(o.Owner) && o.Owner.Matches(&metav1.OwnerReference{APIVersion: tm.APIVersion, Kind: tm.Kind}):
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("%s: %s: %w", where, tm.Kind, err)
		}
		o.Owners = append(o.Owners, u)
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

// IgnoredKinds lists the kinds that were read and ignored, each with its count,
// in name order: "1 example.com/v1 Widget".
func (o *Objects) IgnoredKinds() []string {
	out := make([]string, 0, len(o.Ignored))
	for _, k := range slices.Sorted(maps.Keys(o.Ignored)) {
		out = append(out, fmt.Sprintf("%d %s", o.Ignored[k], k))
	}
	return out
}

// IgnoredHint says which kinds were read and ignored and how to explain one of
// them; "" when none was.
func (o *Objects) IgnoredHint() string {
	if len(o.Ignored) == 0 {
		return ""
	}
	first := slices.Sorted(maps.Keys(o.Ignored))[0]
	apiVersion, kind, _ := strings.Cut(first, " ")
	example := apiVersion + "/" + kind
	if apiVersion == "" {
		example = "GROUP/VERSION/" + kind
	}
	return fmt.Sprintf("read and ignored %s (to explain an owner of such a kind: --owner-kind %s --owner-finalizer NAME, with --mapping FILE when its fields are not named as a Job's)",
		strings.Join(o.IgnoredKinds(), ", "), example)
}

// Pick returns the Job to explain: the one named name (in namespace, when not
// empty), or the only Job when name is empty. The error wraps ErrNoJob when there
// is none and names the candidates when the choice is ambiguous.
func (o *Objects) Pick(namespace, name string) (*batchv1.Job, error) {
	held := fmt.Sprintf("%d pod(s)", len(o.Pods))
	if hint := o.IgnoredHint(); hint != "" && len(o.Jobs) == 0 {
		held += "; it " + hint
	}
	return pick(o.Jobs, namespace, name, kindLabels{none: "batch/v1 Job", one: "job", many: "Jobs"}, held)
}

// PickOwner is Pick for the objects of kind Owner: the one named name (in
// namespace, when not empty), or the only one when name is empty.
func (o *Objects) PickOwner(namespace, name string) (*unstructured.Unstructured, error) {
	kind := o.Owner.String()
	held := fmt.Sprintf("%d pod(s), %d batch/v1 Job(s)", len(o.Pods), len(o.Jobs))
	if len(o.Ignored) > 0 && len(o.Owners) == 0 {
		held += "; it read and ignored " + strings.Join(o.IgnoredKinds(), ", ")
	}
	return pick(o.Owners, namespace, name, kindLabels{none: kind, one: kind, many: "objects of kind " + kind}, held)
}

// kindLabels name a kind in the errors of pick: when there is none, when the one
// named is missing, when several match.
type kindLabels struct{ none, one, many string }

// pick finds the object named name (in namespace, when not empty) among objs; held
// says what the input holds besides, for the error when objs is empty.
func pick[T metav1.Object](objs []T, namespace, name string, kind kindLabels, held string) (T, error) {
	var found []T
	for _, obj := range objs {
		if (name == "" || obj.GetName() == name) && (namespace == "" || obj.GetNamespace() == namespace) {
			found = append(found, obj)
		}
	}
	var zero T
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(objs) == 0:
		return zero, fmt.Errorf("%w: the input holds no %s (%s)", ErrNoJob, kind.none, held)
	case len(found) == 0:
		return zero, fmt.Errorf("%w: %s %q not found in the input (it holds %s)", ErrNoJob, kind.one, qualified(namespace, name), names(objs))
	default:
		return zero, fmt.Errorf("the input holds %d %s (%s): name one", len(found), kind.many, names(found))
	}
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func names[T metav1.Object](objs []T) string {
	out := make([]string, len(objs))
	for i, obj := range objs {
		out[i] = obj.GetNamespace() + "/" + obj.GetName()
	}
	return strings.Join(out, ", ")
}
