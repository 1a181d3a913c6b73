package edge

import (
	"regexp"
	"strings"
	"testing"
)

// Goal: the hand-written name check accepts exactly what NamePattern
// describes.
func TestValidName_MatchesPattern(t *testing.T) {
	re := regexp.MustCompile(NamePattern)
	cases := []string{
		"", "a", "A", "0", "default", "my-queue", "host:worker-1", "a.b_c:d@e/f+g=h-i",
		"-a", ".a", "_a", "a b", "a|b", "é", "aé", "a\n", "\na", "a\x00",
		strings.Repeat("a", 199), strings.Repeat("a", 200), strings.Repeat("a", 201),
		"a" + strings.Repeat("-", 199), "a" + strings.Repeat("-", 200), "9lives", "Z/",
	}
	for c := 0; c < 128; c++ {
		cases = append(cases, string(rune(c)), "a"+string(rune(c)))
	}
	for _, s := range cases {
		if got, want := ValidName(s), re.MatchString(s); got != want {
			t.Errorf("ValidName(%q) = %v, pattern says %v", s, got, want)
		}
	}
}

// FuzzValidName compares the check with the pattern on arbitrary input.
func FuzzValidName(f *testing.F) {
	re := regexp.MustCompile(NamePattern)
	f.Add("default")
	f.Add("a|b")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidName(s), re.MatchString(s); got != want {
			t.Errorf("ValidName(%q) = %v, pattern says %v", s, got, want)
		}
	})
}
