package indexes

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// EnvName is the environment variable through which a container of an Indexed Job reads
// its completion index.
const EnvName = "JOB_COMPLETION_INDEX"

// MaxGeneratedNameLength is the longest metadata.generateName the API server keeps
// whole: a generated name is the prefix plus 5 random characters and must fit a
// 63-character DNS label. apimachinery does not export it (the API server's
// storage/names package does), hence this copy of the number.
const MaxGeneratedNameLength = validation.DNS1123LabelMaxLength - 5

// GenerateName returns the metadata.generateName of a pod for an index: "<job>-<index>-".
// When that is longer than MaxGeneratedNameLength, the job name is cut so that the whole
// fits, the index always kept, as upstream does. jobkit also drops the dots that the cut
// leaves at the end of the job name, because "<name>.-<index>-" is not a valid DNS
// subdomain and the pod could not be created.
func GenerateName(jobName string, index int) string {
	suffix := "-" + strconv.Itoa(index) + "-"
	if keep := MaxGeneratedNameLength - len(suffix); len(jobName) > keep {
		jobName = strings.TrimRight(jobName[:max(keep, 0)], ".")
	}
	return jobName + suffix
}

// Hostname returns the spec.hostname of the pod of an index: "<job>-<index>".
func Hostname(jobName string, index int) string {
	return jobName + "-" + strconv.Itoa(index)
}

// ShapePod turns a fresh copy of a Job's pod template into the pod of one index, the way
// the upstream controller does. It MODIFIES pod, which must be the caller's own copy and
// not an object from an informer. It sets:
//
//   - the annotation and the label batch.kubernetes.io/job-completion-index to the index;
//   - spec.hostname to "<job>-<index>", replacing any hostname of the template, as
//     upstream does (so that pods of an Indexed Job with a headless Service reach each
//     other by index);
//   - metadata.generateName to [GenerateName];
//   - in every init container and container without one, the environment variable
//     JOB_COMPLETION_INDEX, read through the downward API from the label
//     metadata.labels['batch.kubernetes.io/job-completion-index']. A container that
//     already declares JOB_COMPLETION_INDEX keeps its own definition.
//
// It reports whether anything changed. A negative index changes nothing and returns
// false. Maps and slices of pod that ShapePod grows are modified in place; ShapePod does
// not touch the ephemeral containers.
func ShapePod(pod *corev1.Pod, jobName string, index int) (changed bool) {
	if index < 0 {
		return false
	}
	v := strconv.Itoa(index)
	changed = setMapValue(&pod.Annotations, batchv1.JobCompletionIndexAnnotation, v)
	changed = setMapValue(&pod.Labels, batchv1.JobCompletionIndexAnnotation, v) || changed
	if h := Hostname(jobName, index); pod.Spec.Hostname != h {
		pod.Spec.Hostname = h
		changed = true
	}
	if g := GenerateName(jobName, index); pod.GenerateName != g {
		pod.GenerateName = g
		changed = true
	}
	for i := range pod.Spec.InitContainers {
		changed = addIndexEnv(&pod.Spec.InitContainers[i]) || changed
	}
	for i := range pod.Spec.Containers {
		changed = addIndexEnv(&pod.Spec.Containers[i]) || changed
	}
	return changed
}

var indexFieldPath = fmt.Sprintf("metadata.labels['%s']", batchv1.JobCompletionIndexAnnotation)

func addIndexEnv(c *corev1.Container) bool {
	for _, e := range c.Env {
		if e.Name == EnvName {
			return false
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{
		Name: EnvName,
		ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: indexFieldPath},
		},
	})
	return true
}

func setMapValue(m *map[string]string, k, v string) bool {
	if old, ok := (*m)[k]; ok && old == v {
		return false
	}
	if *m == nil {
		*m = make(map[string]string, 1)
	}
	(*m)[k] = v
	return true
}

// ReplacementFailureCount returns the failure counts of the pod that replaces failed:
// [plainindexes.NextFailureCount] of failed's own counts. A nil failed (no earlier pod of the index
// is known) gives the zero FailureCount. An annotation of failed that cannot be read
// counts 0 and is reported in the error, as [PodFailureCount] does.
func ReplacementFailureCount(failed *corev1.Pod, ignored bool) (plainindexes.FailureCount, error) {
	if failed == nil {
		return plainindexes.FailureCount{}, nil
	}
	prev, err := PodFailureCount(failed)
	return plainindexes.NextFailureCount(prev, ignored), err
}

// SetFailureCountAnnotations writes fc into the annotations of pod, which it MODIFIES
// (the caller's fresh copy of the template). batch.kubernetes.io/job-index-failure-count
// is always written, and batch.kubernetes.io/job-index-ignored-failure-count only when
// fc.Ignored is positive, as upstream does; jobkit also removes an ignored count that
// the template carried when fc.Ignored is 0, so the pod states exactly fc. It reports
// whether anything changed. A negative count is written as 0.
func SetFailureCountAnnotations(pod *corev1.Pod, fc plainindexes.FailureCount) (changed bool) {
	changed = setMapValue(&pod.Annotations, batchv1.JobIndexFailureCountAnnotation, strconv.Itoa(int(max(fc.Failed, 0))))
	if fc.Ignored > 0 {
		return setMapValue(&pod.Annotations, batchv1.JobIndexIgnoredFailureCountAnnotation, strconv.Itoa(int(fc.Ignored))) || changed
	}
	if _, ok := pod.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation]; ok {
		delete(pod.Annotations, batchv1.JobIndexIgnoredFailureCountAnnotation)
		changed = true
	}
	return changed
}

// nameAlphabet is the alphabet of generated name suffixes: no vowels (no words) and
// no characters that read alike, as the API server's generated names.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// PodName returns a name for the pod of an index that is the same for the same
// creation decision and different for the next one: GenerateName(jobName, index)
// followed by five characters derived from the Job's UID, the index and attempt, a
// value the caller derives from what it knows of the index's earlier pods (jobkit's
// plan uses a digest of the UIDs of the index's pods in its cache, which changes as
// soon as the pod it creates appears there). A create that timed out after the API server stored the pod is
// then sent again under the same name and answered 409 AlreadyExists: the index never
// gets a second pod, and the Job need not wait for the expectations to expire.
func PodName(jobName string, jobUID string, index int, attempt string) string {
	h := fnv.New64a()
	h.Write([]byte(jobUID))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(index)))
	h.Write([]byte{0})
	h.Write([]byte(attempt))
	sum := h.Sum64()
	var suffix [5]byte
	for i := range suffix {
		suffix[i] = nameAlphabet[sum%uint64(len(nameAlphabet))]
		sum /= uint64(len(nameAlphabet))
	}
	return GenerateName(jobName, index) + string(suffix[:])
}

// NextPodName returns the name that follows name in the sequence of names of the pod
// of index, for when name is held by a pod that is not the Job's (one the Job
// released, another owner's, a foreign pod): PodName with name as the attempt. The
// sequence follows from any of its names, so whoever learns that a name is taken
// (jobkit's plan, from the names it is told are taken; its reconciler, from a live
// read after a creation was refused) walks the same names in the same order, and a
// pod created under one of them is found again after a timeout or a restart.
func NextPodName(jobName, jobUID string, index int, name string) string {
	return PodName(jobName, jobUID, index, name)
}
