package podfailurepolicy

import (
	"regexp"
	"strconv"
	"strings"
)

// The API server checks a pod condition type as a label key: an optional DNS
// subdomain prefix and '/', then a name of at most 63 characters. The check is written
// here with the standard library only, because apimachinery moved and renamed it
// between the Kubernetes versions jobkit supports (validation.IsQualifiedName until
// v0.36, content.IsLabelKey from v0.37), and its messages are those of Kubernetes 1.37.
const (
	labelNameFmt       = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	labelNameMsg       = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelNameMaxLength = 63
	subdomainLabelFmt  = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	subdomainFmt       = subdomainLabelFmt + "(\\." + subdomainLabelFmt + ")*"
	subdomainMsg       = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	subdomainMaxLength = 253
)

var (
	labelNameRegexp = regexp.MustCompile("^" + labelNameFmt + "$")
	subdomainRegexp = regexp.MustCompile("^" + subdomainFmt + "$")
)

// conditionTypeErrors returns why s is not a valid condition type (a label key), in
// the API server's words, or nil when it is one.
func conditionTypeErrors(s string) []string {
	if isPlainLabelKey(s) {
		return nil
	}
	return labelKeyErrorsSlow(s)
}

// labelKeyErrorsSlow is conditionTypeErrors by the regular expressions alone.
func labelKeyErrorsSlow(s string) []string {
	var errs []string
	name := s
	switch strings.Count(s, "/") {
	case 0:
	case 1:
		var prefix string
		prefix, name, _ = strings.Cut(s, "/")
		switch {
		case prefix == "":
			errs = append(errs, "prefix part must be non-empty")
		default:
			if len(prefix) > subdomainMaxLength {
				errs = append(errs, "prefix part "+maxLenMsg(subdomainMaxLength))
			}
			if !subdomainRegexp.MatchString(prefix) {
				errs = append(errs, "prefix part "+regexMsg(subdomainMsg, subdomainFmt, "example.com"))
			}
		}
	default:
		return []string{"a valid label key " + regexMsg(labelNameMsg, labelNameFmt, "MyName", "my.name", "123-abc") +
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
	}
	switch {
	case name == "":
		errs = append(errs, "name part must be non-empty")
	case len(name) > labelNameMaxLength:
		errs = append(errs, "name part "+maxLenMsg(labelNameMaxLength))
	}
	if !labelNameRegexp.MatchString(name) {
		errs = append(errs, "name part "+regexMsg(labelNameMsg, labelNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

func maxLenMsg(n int) string {
	return "must be no more than " + strconv.Itoa(n) + " characters"
}

// regexMsg explains a pattern mismatch the way the API server does: the rule, some
// valid examples, and the pattern itself.
func regexMsg(msg, pattern string, examples ...string) string {
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString(" (e.g. ")
	for i, e := range examples {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("'" + e + "', ")
	}
	b.WriteString("regex used for validation is '" + pattern + "')")
	return b.String()
}

// isPlainLabelKey reports whether s is a label key without a prefix: 1 to 63
// characters of [A-Za-z0-9_.-] that begin and end with a letter or digit. Such a key
// is valid; anything else is left to the regular expressions, which explain what is
// wrong. It spares the common condition types those and allocations.
func isPlainLabelKey(s string) bool {
	if len(s) == 0 || len(s) > 63 || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
