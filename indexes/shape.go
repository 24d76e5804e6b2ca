package indexes

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jobkit/jobkit/owner"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// envName is the environment variable through which a container of an Indexed owner
// reads its completion index, whatever the owner's kind (the name upstream gives it).
const envName = "JOB_COMPLETION_INDEX"

// maxGeneratedNameLength is the longest metadata.generateName the API server keeps
// whole: a generated name is the prefix plus 5 random characters and must fit a
// 63-character DNS label. apimachinery does not export it (the API server's
// storage/names package does), hence this copy of the number.
const maxGeneratedNameLength = validation.DNS1123LabelMaxLength - 5

// generateName returns the metadata.generateName of a pod for an index: "<name>-<index>-".
// When that is longer than maxGeneratedNameLength, the owner's name is cut so that the
// whole fits, the index always kept, as upstream does. jobkit also drops the dots that
// the cut leaves at the end of the name, because "<name>.-<index>-" is not a valid DNS
// subdomain and the pod could not be created.
func generateName(name string, index int) string {
	suffix := "-" + strconv.Itoa(index) + "-"
	if keep := maxGeneratedNameLength - len(suffix); len(name) > keep {
		name = strings.TrimRight(name[:max(keep, 0)], ".")
	}
	return name + suffix
}

// hostname returns the spec.hostname of the pod of an index: "<name>-<index>".
func hostname(name string, index int) string {
	return name + "-" + strconv.Itoa(index)
}

// ShapePod turns a fresh copy of an owner's pod template into the pod of one index,
// the way the upstream controller shapes a Job's. It MODIFIES pod, which must be the
// caller's own copy and not an object from an informer. name is the owner's name and
// kind its kind, whose keys the pod gets. It sets:
//
//   - the annotation and the label kind.IndexKey() to the index
//     (batch.kubernetes.io/job-completion-index for a batch/v1 Job);
//   - spec.hostname to "<name>-<index>", replacing any hostname of the template, as
//     upstream does; spec.subdomain stays the template's (set it to the name of a
//     headless Service, and the pods reach each other as
//     "<name>-<index>.<subdomain>"; upstream adds none either);
//   - metadata.generateName to "<name>-<index>-", the name cut to fit;
//   - in every init container and container without one, the environment variable
//     JOB_COMPLETION_INDEX, read through the downward API from the label
//     kind.IndexKey(). A container that already declares JOB_COMPLETION_INDEX keeps
//     its own definition.
//
// It reports whether anything changed. A negative index changes nothing and returns
// false. Maps and slices of pod that ShapePod grows are modified in place; ShapePod does
// not touch the ephemeral containers.
func ShapePod(kind owner.Kind, pod *corev1.Pod, name string, index int) (changed bool) {
	if index < 0 {
		return false
	}
	key := kind.IndexKey()
	v := strconv.Itoa(index)
	changed = setMapValue(&pod.Annotations, key, v)
	changed = setMapValue(&pod.Labels, key, v) || changed
	if h := hostname(name, index); pod.Spec.Hostname != h {
		pod.Spec.Hostname = h
		changed = true
	}
	if g := generateName(name, index); pod.GenerateName != g {
		pod.GenerateName = g
		changed = true
	}
	fieldPath := fmt.Sprintf("metadata.labels['%s']", key)
	for i := range pod.Spec.InitContainers {
		changed = addIndexEnv(&pod.Spec.InitContainers[i], fieldPath) || changed
	}
	for i := range pod.Spec.Containers {
		changed = addIndexEnv(&pod.Spec.Containers[i], fieldPath) || changed
	}
	return changed
}

func addIndexEnv(c *corev1.Container, fieldPath string) bool {
	for _, e := range c.Env {
		if e.Name == envName {
			return false
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{
		Name: envName,
		ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: fieldPath},
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

// ReplacementFailureCount returns the failure counts of the pod that replaces failed,
// a pod of an owner of kind:
// [plainindexes.NextFailureCount] of failed's own counts. A nil failed (no earlier pod of the index
// is known) gives the zero FailureCount. An annotation of failed that cannot be read
// counts 0 and is reported in the error, as [PodFailureCount] does.
func ReplacementFailureCount(kind owner.Kind, failed *corev1.Pod, ignored bool) (plainindexes.FailureCount, error) {
	if failed == nil {
		return plainindexes.FailureCount{}, nil
	}
	prev, err := PodFailureCount(kind, failed)
	return plainindexes.NextFailureCount(prev, ignored), err
}

// SetFailureCountAnnotations writes fc into the annotations of pod, a pod of an owner
// of kind, which it MODIFIES (the caller's fresh copy of the template).
// kind.FailureCountKey() (batch.kubernetes.io/job-index-failure-count) is always
// written, and kind.IgnoredFailureCountKey() only when fc.Ignored is positive, as
// upstream does; jobkit also removes an ignored count that the template carried when
// fc.Ignored is 0, so the pod states exactly fc. It reports whether anything changed.
// A negative count is written as 0.
func SetFailureCountAnnotations(kind owner.Kind, pod *corev1.Pod, fc plainindexes.FailureCount) (changed bool) {
	changed = setMapValue(&pod.Annotations, kind.FailureCountKey(), strconv.Itoa(int(max(fc.Failed, 0))))
	ignoredKey := kind.IgnoredFailureCountKey()
	if fc.Ignored > 0 {
		return setMapValue(&pod.Annotations, ignoredKey, strconv.Itoa(int(fc.Ignored))) || changed
	}
	if _, ok := pod.Annotations[ignoredKey]; ok {
		delete(pod.Annotations, ignoredKey)
		changed = true
	}
	return changed
}

// nameAlphabet is the alphabet of generated name suffixes: no vowels (no words) and
// no characters that read alike, as the API server's generated names.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// PodName returns a name for the pod of an index that is the same for the same
// creation decision and different for the next one: "<jobName>-<index>-" (cut to fit)
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
	return generateName(jobName, index) + string(suffix[:])
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
