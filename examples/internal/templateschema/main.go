// Command templateschema gives the schemaless child Job template of the
// example JobSet CRD (spec.replicatedJobs[*].template) a shallow schema and
// the update rules JobSet's webhook applies to it, so that the API server
// itself lets exactly JobSet's mutable fields change:
//
//   - on a running group, an Indexed role's parallelism and completions
//     (JobSet v0.12's elastic Indexed Jobs: at least 1 each, equal to each
//     other; not once the group has finished, a rule on the root the
//     type's markers hold);
//   - on a group suspended before or by the update, the pod template's
//     labels, annotations, nodeSelector, tolerations and schedulingGates (a
//     rule on the spec the type's markers hold);
//   - nothing else of the template.
//
// CEL sees only the fields a schema declares (an object that preserves
// unknown fields does not expose them), and a rule cannot compare an object
// less some of its fields; so the Job template's metadata, the JobSpec, the
// pod template's metadata and the PodSpec each get every field of their
// k8s.io/api type declared one level deep (the value below stays schemaless,
// unknown fields stay preserved), and each level a rule that compares its
// fields but the mutable ones. A field newer than the k8s.io/api this module
// builds with is preserved but not compared.
//
// hack/generate.sh runs it on the CRD controller-gen wrote:
//
//	go run ./internal/templateschema jobset/config/crd/jobset.examples.jobkit.dev_jobsets.yaml
package main

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

type object = map[string]any

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: templateschema CRD.yaml")
		os.Exit(2)
	}
	if err := patch(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "templateschema:", err)
		os.Exit(1)
	}
}

// patch rewrites the CRD file at path with the template's schema.
func patch(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd object
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	versions, _ := dig(crd, "spec", "versions").([]any)
	if len(versions) == 0 {
		return fmt.Errorf("%s: no spec.versions", path)
	}
	for _, v := range versions {
		rj, ok := dig(v, "schema", "openAPIV3Schema", "properties", "spec", "properties", "replicatedJobs", "items", "properties").(object)
		if !ok {
			return fmt.Errorf("%s: no spec.replicatedJobs items schema", path)
		}
		old, ok := rj["template"].(object)
		if !ok {
			return fmt.Errorf("%s: no replicatedJobs template schema", path)
		}
		rj["template"] = templateSchema(old["description"])
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte("---\n"), out...), 0o644)
}

// dig returns the value at the keys' path, nil when absent.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(object)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// templateSchema is the schema of a batch/v1 JobTemplateSpec, with its rules.
func templateSchema(description any) object {
	meta := reflect.TypeFor[metav1.ObjectMeta]()
	podTemplate := level(reflect.TypeFor[corev1.PodTemplateSpec](), nil)
	props := podTemplate["properties"].(object)
	suspended := "field is immutable: only labels, annotations, nodeSelector, tolerations and schedulingGates may change, while the JobSet is suspended"
	props["metadata"] = rules(level(meta, nil), unchangedBut(meta, suspended, "labels", "annotations")...)
	pod := reflect.TypeFor[corev1.PodSpec]()
	props["spec"] = rules(level(pod, nil), unchangedBut(pod, suspended, "nodeSelector", "tolerations", "schedulingGates")...)

	jobSpec := reflect.TypeFor[batchv1.JobSpec]()
	spec := rules(level(jobSpec, object{"template": podTemplate}), append(
		unchangedBut(jobSpec, "field is immutable: only parallelism and completions may change", "parallelism", "completions", "template"),
		rule("("+same("parallelism")+" && "+same("completions")+") || !has(self.completionMode) || self.completionMode == 'Indexed'",
			"", "field is immutable: parallelism and completions may change only for an Indexed Job"),
		rule(same("parallelism")+" || !has(self.parallelism) || self.parallelism >= 1", ".parallelism", "parallelism must be >= 1"),
		rule(same("completions")+" || !has(self.completions) || self.completions >= 1", ".completions", "completions must be >= 1"),
		rule("("+same("parallelism")+" && "+same("completions")+") || !has(self.parallelism) || !has(self.completions) || self.parallelism == self.completions",
			".completions", "completions must be equal to parallelism for Elastic Indexed Jobs"))...)

	t := rules(level(reflect.TypeFor[batchv1.JobTemplateSpec](), object{"metadata": level(meta, nil), "spec": spec}),
		rule(same("metadata"), ".metadata", "field is immutable"))
	if description != nil {
		t["description"] = description
	}
	return t
}

// level is the schema of struct type t one level deep: each field (by its
// JSON name) typed and its value schemaless below, unknown fields
// preserved; fields replaces the schema of the fields it names.
func level(t reflect.Type, fields object) object {
	props := object{}
	for f := range fieldsOf(t) {
		props[f.name] = shallow(f.typ)
	}
	for k, v := range fields {
		props[k] = v
	}
	return object{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": props}
}

// shallow is the schema of a field of type t: its JSON type, with an object
// or list of objects left schemaless.
func shallow(t reflect.Type) object {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[metav1.Time]():
		return object{"type": "string", "format": "date-time", "nullable": true, "maxLength": maxString}
	case t.Kind() == reflect.String:
		return object{"type": "string", "maxLength": maxString}
	case t.Kind() == reflect.Bool:
		return object{"type": "boolean"}
	case t.Kind() == reflect.Int32:
		return object{"type": "integer", "format": "int32"}
	case t.Kind() == reflect.Int64, t.Kind() == reflect.Int:
		return object{"type": "integer", "format": "int64"}
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String:
		return object{"type": "object", "additionalProperties": object{"type": "string"}}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return object{"type": "array", "maxItems": maxItems, "items": object{"type": "string", "maxLength": maxItemString}}
	case t.Kind() == reflect.Slice:
		return object{"type": "array", "maxItems": maxItems, "items": object{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	}
	return object{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
}

// maxString bounds the string fields declared: every one of these types'
// top-level strings is a name, a DNS label or subdomain, an enumeration or a
// time, which the API refuses beyond 253 characters anyway; a bound keeps the
// cost the API server estimates for the rules that compare them within its
// budget.
const maxString = 253

// maxItems bounds the lists declared (containers, volumes, tolerations and
// the like), far above any template's, for the same reason.
const maxItems = 10000

// maxItemString bounds the strings of the lists of strings declared (a pod
// template's finalizers: qualified names, at most 253 + 1 + 63 characters).
const maxItemString = 317

type field struct {
	name string
	typ  reflect.Type
}

// fieldsOf yields the JSON fields of struct t, embedded structs inlined.
func fieldsOf(t reflect.Type) func(func(field) bool) {
	return func(yield func(field) bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" && f.Anonymous {
				for g := range fieldsOf(f.Type) {
					if !yield(g) {
						return
					}
				}
				continue
			}
			if !yield(field{name, f.Type}) {
				return
			}
		}
	}
}

// unchangedBut are the rules that every field of t but those named is
// unchanged by an update, with message msg: one rule per rulesFields
// fields, as the API server bounds the cost of each rule.
func unchangedBut(t reflect.Type, msg string, mutable ...string) []object {
	var terms []string
	for f := range fieldsOf(t) {
		if !slices.Contains(mutable, f.name) {
			terms = append(terms, same(f.name))
		}
	}
	var out []object
	for c := range slices.Chunk(terms, ruleFields) {
		out = append(out, rule(strings.Join(c, " && "), "", msg))
	}
	return out
}

// ruleFields is how many fields one rule of unchangedBut compares.
const ruleFields = 8

// same is the CEL of field f unchanged by an update: present in both, and
// equal, or in neither. (The optional form, self.?f == oldSelf.?f, reads the
// same but loses the field's bounds in the API server's cost estimate.)
func same(f string) string {
	if celReserved[f] {
		f = "__" + f + "__" // CEL's escape of a reserved word
	}
	return fmt.Sprintf("has(self.%s) == has(oldSelf.%s) && (!has(self.%s) || self.%s == oldSelf.%s)", f, f, f, f, f)
}

// celReserved are CEL's reserved words that a field may be named.
var celReserved = map[string]bool{"namespace": true, "package": true, "import": true, "function": true, "var": true,
	"let": true, "loop": true, "while": true, "for": true, "if": true, "else": true, "return": true, "void": true,
	"const": true, "continue": true, "break": true, "as": true, "in": true}

func rule(expr, fieldPath, message string) object {
	r := object{"rule": expr, "message": message}
	if fieldPath != "" {
		r["fieldPath"] = fieldPath
	}
	return r
}

// rules sets the schema's x-kubernetes-validations.
func rules(schema object, rs ...object) object {
	list := make([]any, len(rs))
	for i, r := range rs {
		list[i] = r
	}
	schema["x-kubernetes-validations"] = list
	return schema
}
