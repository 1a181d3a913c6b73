package edge

import "strings"

// NamePattern is what the custom validation tag `name` accepts: queue
// names, worker ids, instance ids, workflow and activity types, namespaces.
// It excludes '|', the separator of notification payloads.
const NamePattern = `^[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,199}$`

// ValidName reports whether s matches NamePattern. It is checked on every
// request (namespace, worker id, queue), where the regular expression was
// a measurable share of a heartbeat's CPU; TestValidName_MatchesPattern
// keeps the two in agreement.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && strings.IndexByte("._:@/+=-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// NameMessage is the problem's message of a field that is not a name.
const NameMessage = "must be 1 to 200 characters among letters, digits and . _ : @ / + = -, starting with a letter or digit"
