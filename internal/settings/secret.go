package settings

import (
	"log/slog"
	"strings"
)

// Secret is a credential. It prints as "[redacted]" through fmt's %v, %+v,
// %s and %#v, slog and JSON, so a Config can be logged or printed whole; use
// Reveal where the value is really needed.
type Secret string

const redacted = "[redacted]"

// Reveal returns the credential itself.
func (s Secret) Reveal() string { return string(s) }

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps encoders such as JSON and YAML from writing the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// scrub removes the secret key from text that came from a library: viper and
// mapstructure quote offending values in their errors. The access key is left:
// it is an account name, often a word that also appears in hints.
func scrub(text string, secret Secret) string {
	if secret == "" {
		return text
	}
	return strings.ReplaceAll(text, string(secret), redacted)
}
