package group

import (
	"strconv"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/internal/fieldcheck"
)

// VolumeClaim is one template of spec.volumeClaimPolicies[].templates: a
// persistent volume claim the group creates once and every role that mounts
// it shares (JobSet's KEP-572).
type VolumeClaim struct {
	// Name is the template's metadata.name, the name of the volume the roles
	// mount; the claim is named <Name>-<group> ([VolumeClaim.ClaimName]).
	Name string
	// Namespace is the template's metadata.namespace, which must be empty:
	// the claim lives in the group's namespace.
	Namespace string
	// Policy and Template are the positions of the claim in
	// spec.volumeClaimPolicies and in that policy's templates, for the field
	// paths of errors.
	Policy, Template int
	// WhenDeleted is the policy's retentionPolicy.whenDeleted: "Delete" (the
	// default, also for "") gives the claim the group as its controller, so
	// it goes with the group; "Retain" leaves it behind.
	WhenDeleted string
}

// The retention policies of a claim.
var validWhenDeleted = []string{"Delete", "Retain"}

// ClaimName returns the name of the claim the group named group creates:
// <claim>-<group>, as JobSet names it.
func (c *VolumeClaim) ClaimName(group string) string { return c.Name + "-" + group }

// Owned reports whether the group owns the claim (retention Delete, the
// default): the claim carries the group's controller reference, and the
// garbage collector deletes it with the group.
func (c *VolumeClaim) Owned() bool { return c.WhenDeleted != "Retain" }

// maxClaimNameLength is the longest claim name JobSet accepts.
const maxClaimNameLength = 63

func claimPath(c *VolumeClaim) string {
	return "volumeClaimPolicies[" + strconv.Itoa(c.Policy) + "]"
}

// validateClaims checks the volume claims of spec as JobSet's webhook and CRD
// schema do: no namespace, a known retention, names unique DNS-1123
// subdomains whose claim names fit in 63 characters, a mount of each in some
// role, and no role with a volume of a claim's name.
func validateClaims(errs Errors, spec *Spec, name string) Errors {
	seen := map[string]bool{}
	policies := map[int]bool{}
	for k := range spec.VolumeClaims {
		c := &spec.VolumeClaims[k]
		path := claimPath(c) + ".template[" + strconv.Itoa(c.Template) + "]"
		if !policies[c.Policy] {
			policies[c.Policy] = true
			if c.WhenDeleted != "" && c.WhenDeleted != "Delete" && c.WhenDeleted != "Retain" {
				errs = append(errs, fieldcheck.NotSupportedValue(claimPath(c)+".retentionPolicy.whenDeleted", c.WhenDeleted, validWhenDeleted))
			}
		}
		if c.Namespace != "" {
			errs = append(errs, invalid(claimPath(c), c.Namespace, "namespace cannot be set for VolumeClaimPolicies templates"))
		}
		if seen[c.Name] {
			errs = append(errs, invalid(path+".name", c.Name, "names must be unique for VolumeClaimPolicies template"))
		}
		seen[c.Name] = true
		for _, m := range dns1123Subdomain(c.Name) {
			errs = append(errs, invalid(path+".name", c.Name, m))
		}
		if name != "" && len(c.ClaimName(name)) > maxClaimNameLength {
			errs = append(errs, invalid(path+".name", c.Name, "VolumeClaimPolicies template name is too long"))
		}
		mounted := false
		for i := range spec.Roles {
			r := &spec.Roles[i]
			for v, vol := range r.Volumes {
				if vol == c.Name {
					errs = append(errs, invalid(rolePath(i, ".template.spec.template.spec.volumes["+strconv.Itoa(v)+"].name"), vol,
						"volume name conflicts with VolumeClaimPolicy template name: "+c.Name))
				}
			}
			mounted = mounted || r.mounts(c.Name)
		}
		if !mounted {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "replicatedJobs",
				Detail: "replicatedJob containers don't have a matching volumeMount: " + c.Name + " from VolumeClaimPolicies"})
		}
	}
	return errs
}

// mounts reports whether a container or init container of the role mounts
// the volume of that name.
func (r *Role) mounts(volume string) bool {
	for _, m := range r.VolumeMounts {
		if m == volume {
			return true
		}
	}
	return false
}

// Claims returns the positions in s.VolumeClaims of the claims role r
// mounts, in order: the volumes a child of the role is given, each naming
// its claim ([VolumeClaim.ClaimName]). O(claims × mounts of the role).
func (s *Spec) Claims(r int) []int {
	var out []int
	for k := range s.VolumeClaims {
		if s.Roles[r].mounts(s.VolumeClaims[k].Name) {
			out = append(out, k)
		}
	}
	return out
}
