package childjobs

import (
	"cmp"
	"reflect"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/plain/fielderr"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// Default applies the defaults JobSet's webhook applies on create, and those
// of its CRD schema that plaingroup.Default knows: the roles' group names, the
// success policy (All), the startup order (AnyOrder), the restart strategy
// (Recreate) and rule names (plaingroup.Default); each template's
// completionMode (Indexed) and pod restartPolicy (OnFailure); and
// EnableDNSHostnames and PublishNotReadyAddresses (true). Spec.Subdomain
// stays as it is (the group's name is its default when the group runs, as in
// JobSet), and so do the roles' replicas (a zero cannot be told from unset
// here: the CRD schema defaults them to 1). It modifies in: its Spec (whose
// slices it replaces by defaulted copies) and the elements of Templates, so
// a caller whose Templates is its object's slice defaults the object. Compute
// applies the same defaults to what it reads and creates.
func (in *Input) Default() {
	subdomain := in.Spec.Subdomain
	in.Spec = plaingroup.Default(in.Spec)
	in.Spec.Subdomain = subdomain
	for i := range in.Templates {
		defaultTemplate(&in.Templates[i].Spec)
	}
	if in.EnableDNSHostnames == nil {
		in.EnableDNSHostnames = ptr.To(true)
	}
	if in.PublishNotReadyAddresses == nil {
		in.PublishNotReadyAddresses = ptr.To(true)
	}
}

// defaultTemplate applies JobSet's webhook defaults to a child's spec: the one
// home of them, for Default and for each child created.
func defaultTemplate(spec *batchv1.JobSpec) {
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	if spec.Template.Spec.RestartPolicy == "" {
		spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	}
}

// Validate checks the group as JobSet's CRD schema and webhook do on create:
// plaingroup.Validate of its spec, the roles read from their templates (sized
// as Compute sizes them, with their completion mode, backoffLimit and
// podReplacementPolicy) and named Name when Spec.Name is empty (and from
// Spec.GenerateName when both are). Each error is a field error with JobSet's
// path (under spec, or metadata.name), the value, and JobSet's words, or
// apimachinery's where JobSet passes them on. An executor fails a group it
// refuses rather than planning it (controllerruntime.Setup does, as JobSet
// does); a webhook returns the list. It does not modify in.
func (in *Input) Validate() field.ErrorList {
	spec := in.sizedSpec()
	spec.Name = cmp.Or(spec.Name, in.Name)
	return fieldErrors(plaingroup.Validate(&spec))
}

// ValidateUpdate checks the group in that replaces old, as JobSet's CRD schema
// and webhook do on update: every error of Validate, the immutable fields of
// plaingroup.ValidateUpdate (with its elastic rules: an Indexed role's
// parallelism and completions may change while old's status has not
// finished), the claim templates (Value is immutable), the network (Value is immutable), and each role's
// template, which may not change (field is immutable) except, while old or in
// is suspended, its pods' labels, annotations, nodeSelector, tolerations and
// schedulingGates (what a queue such as Kueue sets on admission). A changed
// template is reported at the first field that differs, without its value.
// Neither Input is modified.
func (in *Input) ValidateUpdate(old *Input) field.ErrorList {
	was, spec := old.sizedSpec(), in.sizedSpec()
	was.Name, spec.Name = cmp.Or(was.Name, old.Name), cmp.Or(spec.Name, in.Name)
	was.Finished = old.Status.TerminalState != "" || groups.Finished(old.Status.Conditions) != nil
	errs := fieldErrors(plaingroup.ValidateUpdate(&was, &spec))
	network := field.NewPath("spec", "network")
	for _, f := range []struct {
		name string
		a, b *bool
	}{{"enableDNSHostnames", old.EnableDNSHostnames, in.EnableDNSHostnames}, {"publishNotReadyAddresses", old.PublishNotReadyAddresses, in.PublishNotReadyAddresses}} {
		if a, b := ptr.Deref(f.a, true), ptr.Deref(f.b, true); a != b {
			errs = append(errs, field.Invalid(network.Child(f.name), b, "Value is immutable"))
		}
	}
	if !equality.Semantic.DeepEqual(old.ClaimTemplates, in.ClaimTemplates) && !reported(errs, "spec.volumeClaimPolicies") {
		errs = append(errs, field.Invalid(field.NewPath("spec", "volumeClaimPolicies"), field.OmitValueType{}, "Value is immutable"))
	}
	if len(old.Templates) != len(in.Templates) || len(old.Spec.Roles) != len(in.Spec.Roles) {
		return errs // the roles' count is reported
	}
	suspended := old.Suspend || in.Suspend
	for i := range in.Templates {
		a, b := old.Templates[i], in.Templates[i]
		// plaingroup reports these two.
		b.Spec.Parallelism, b.Spec.Completions = a.Spec.Parallelism, a.Spec.Completions
		if suspended {
			ap, bp := &a.Spec.Template, &b.Spec.Template
			bp.Labels, bp.Annotations = ap.Labels, ap.Annotations
			bp.Spec.NodeSelector, bp.Spec.Tolerations, bp.Spec.SchedulingGates = ap.Spec.NodeSelector, ap.Spec.Tolerations, ap.Spec.SchedulingGates
		}
		if !equality.Semantic.DeepEqual(a, b) {
			path := firstChange(field.NewPath("spec", "replicatedJobs").Index(i).Child("template"), reflect.ValueOf(a), reflect.ValueOf(b))
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, "field is immutable"))
		}
	}
	return errs
}

// reported reports whether errs has an error at path.
func reported(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if e.Field == path {
			return true
		}
	}
	return false
}

// firstChange returns the path of the first field in which a and b, of one
// type and not equal, differ: it descends through structs (by JSON name) and
// pointers, and stops at anything else.
func firstChange(path *field.Path, a, b reflect.Value) *field.Path {
	for {
		switch a.Kind() {
		case reflect.Pointer:
			if a.IsNil() || b.IsNil() {
				return path
			}
			a, b = a.Elem(), b.Elem()
			continue
		case reflect.Struct:
			t := a.Type()
			for k := range t.NumField() {
				fa, fb := a.Field(k), b.Field(k)
				if !t.Field(k).IsExported() || equality.Semantic.DeepEqual(fa.Interface(), fb.Interface()) {
					continue
				}
				name, _, _ := strings.Cut(t.Field(k).Tag.Get("json"), ",")
				if name != "" && name != "-" {
					return firstChange(path.Child(name), fa, fb)
				}
				return firstChange(path, fa, fb)
			}
		}
		return path
	}
}

// sizedSpec returns a copy of in.Spec whose roles have the parallelism (the
// API's default of 1), completions, completion mode, backoffLimit,
// podReplacementPolicy, volume mounts, volumes and exclusive placement
// annotations of their templates, whose volume claims have the names and
// namespaces of theirs, and whose exclusive placement is read from the
// group's annotations.
func (in *Input) sizedSpec() plaingroup.Spec {
	spec := in.Spec
	spec.ExclusiveTopology = in.Annotations[annotationExclusiveTopology]
	_, spec.NodeSelectorStrategy = in.Annotations[annotationNodeSelector]
	spec.Roles = slices.Clone(spec.Roles)
	for i := range spec.Roles {
		if i < len(in.Templates) {
			t := &in.Templates[i].Spec
			r := &spec.Roles[i]
			r.Parallelism = ptr.Deref(t.Parallelism, 1)
			r.Completions = t.Completions
			r.NonIndexed = t.CompletionMode != nil && *t.CompletionMode != batchv1.IndexedCompletion
			r.BackoffLimit = t.BackoffLimit
			r.PodReplacementPolicy = string(ptr.Deref(t.PodReplacementPolicy, ""))
			r.VolumeMounts, r.Volumes = volumeNames(&t.Template.Spec)
			a := in.Templates[i].Annotations
			r.ExclusiveTopology = a[annotationExclusiveTopology]
			_, r.NodeSelectorStrategy = a[annotationNodeSelector]
		}
	}
	spec.VolumeClaims = slices.Clone(spec.VolumeClaims)
	for k := range spec.VolumeClaims {
		if k < len(in.ClaimTemplates) {
			c := &in.ClaimTemplates[k]
			spec.VolumeClaims[k].Name, spec.VolumeClaims[k].Namespace = c.Name, c.Namespace
		}
	}
	return spec
}

// volumeNames returns the names of the volumes the containers and init
// containers of a pod mount, and of the pod's volumes.
func volumeNames(pod *corev1.PodSpec) (mounts, volumes []string) {
	for _, list := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		for i := range list {
			for _, m := range list[i].VolumeMounts {
				mounts = append(mounts, m.Name)
			}
		}
	}
	for _, v := range pod.Volumes {
		volumes = append(volumes, v.Name)
	}
	return mounts, volumes
}

// fieldErrors returns plaingroup's errors as field errors: metadata paths as
// they are, the others under spec.
func fieldErrors(errs plaingroup.Errors) field.ErrorList {
	if len(errs) == 0 {
		return nil
	}
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		p := e.Field
		if !strings.HasPrefix(p, "metadata.") {
			p = "spec." + p
		}
		path := field.NewPath(p)
		var fe *field.Error
		switch e.Type {
		case fielderr.Required:
			fe = field.Required(path, e.Detail)
		case fielderr.Duplicate:
			fe = field.Duplicate(path, e.BadValue)
		case fielderr.NotSupported:
			fe = field.NotSupported(path, e.BadValue, e.Supported)
		case fielderr.TooMany:
			n, _ := e.BadValue.(int)
			fe = field.TooMany(path, n, e.Max)
		case fielderr.TooLong:
			fe = field.TooLong(path, e.BadValue, e.Max)
		case fielderr.Forbidden:
			fe = field.Forbidden(path, e.Detail)
		default:
			fe = field.Invalid(path, e.BadValue, e.Detail)
		}
		if e.Origin != "" {
			fe = fe.WithOrigin(e.Origin)
		}
		out = append(out, fe)
	}
	return out
}
