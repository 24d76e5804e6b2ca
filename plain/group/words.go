package group

import (
	"regexp"
	"strconv"
	"strings"
)

// The checks JobSet's webhook makes with k8s.io/apimachinery's validation
// helpers, worded as those helpers word them (apimachinery v0.37), so that a
// JobSet user sees the same text from Validate. The package stays on the
// standard library; groups/childjobs tests these words against apimachinery's.
const (
	dns1035Expr          = "[a-z]([-a-z0-9]*[a-z0-9])?"
	dns1123LabelExpr     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainExpr = dns1123LabelExpr + `(\.` + dns1123LabelExpr + ")*"
	labelValueExpr       = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
	httpPathExpr         = `[A-Za-z0-9/\-._~%!$&'()*+,;=:]+`

	dns1035Words          = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"
	dns1123SubdomainWords = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	labelValueWords       = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

	// maxSubdomainLength is the longest DNS-1123 subdomain.
	maxSubdomainLength = 253
)

var (
	dns1035Re    = regexp.MustCompile("^" + dns1035Expr + "$")
	subdomainRe  = regexp.MustCompile("^" + dns1123SubdomainExpr + "$")
	labelValueRe = regexp.MustCompile("^" + labelValueExpr + "$")
	httpPathRe   = regexp.MustCompile("^" + httpPathExpr + "$")
	ruleNameRe   = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
)

// The messages JobSet's webhook words itself, used where it uses them.
const (
	// dnsTooLong is apimachinery's words for a DNS name over 63 characters,
	// which JobSet replaces with its own message for each name it checks.
	dnsTooLong          = "must be no more than 63 characters"
	groupNameTooLong    = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
	jobNameTooLong      = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
	podNameTooLong      = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
	subdomainTooLong    = ".spec.network.subdomain is too long, must be less than 63 characters"
	firstDependsOn      = "DependsOn can't be set for the first ReplicatedJob"
	coordinatorIndexed  = "job for coordinator pod must be indexed completion mode, and completions number must be set"
	ruleNameWords       = "a failure policy rule name must start with an alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
	inPlaceGateOff      = "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled"
	restartJobGateOff   = "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed when RestartJob feature gate is disabled"
	domainPrefixedWords = `must be a domain-prefixed path (such as "acme.io/foo")`
)

// examples renders apimachinery's "(e.g. 'a' or 'b', regex used for
// validation is '...')".
func regexWords(words, expr string, examples ...string) string {
	var b strings.Builder
	b.WriteString(words)
	b.WriteString(" (")
	if len(examples) > 0 {
		b.WriteString("e.g. ")
		for i, e := range examples {
			if i > 0 {
				b.WriteString(" or ")
			}
			b.WriteString("'" + e + "', ")
		}
	}
	b.WriteString("regex used for validation is '" + expr + "')")
	return b.String()
}

// dns1035Label returns what is wrong with v as a DNS-1035 label, in
// apimachinery's words, with tooLong in place of its length message.
func dns1035Label(v, tooLong string) []string {
	var out []string
	if len(v) > maxNameLength {
		out = append(out, tooLong)
	}
	if !dns1035Re.MatchString(v) {
		out = append(out, regexWords(dns1035Words, dns1035Expr, "my-name", "abc-123"))
	}
	return out
}

// dns1123Subdomain returns what is wrong with v as a DNS-1123 subdomain.
func dns1123Subdomain(v string) []string {
	var out []string
	if len(v) > maxSubdomainLength {
		out = append(out, "must be no more than "+strconv.Itoa(maxSubdomainLength)+" characters")
	}
	if !subdomainRe.MatchString(v) {
		out = append(out, regexWords(dns1123SubdomainWords, dns1123SubdomainExpr, "example.com"))
	}
	return out
}

// labelValue returns what is wrong with v as a label value.
func labelValue(v string) []string {
	var out []string
	if len(v) > maxNameLength {
		out = append(out, "must be no more than "+strconv.Itoa(maxNameLength)+" bytes")
	}
	if !labelValueRe.MatchString(v) {
		out = append(out, regexWords(labelValueWords, labelValueExpr, "MyValue", "my_value", "12345"))
	}
	return out
}
