package seeds

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
)

// SaltBytes is the size of the salts whestbake bakes with, whestbench's
// SALT_NBYTES, from generate_salt in seeds.py.
const SaltBytes = 32

// Personalisation strings of protocol 4.0's two keyed digests, from seeds.py:
// one for the estimator seed, one for the name seed, so the two are
// independent even though they hash the same input seed with the same key.
var (
	personEstimator = []byte("whest-4.0-est")
	personName      = []byte("whest-4.0-name")
)

// Salt is protocol 4.0's secret: the BLAKE2b key from which the
// participant-facing seeds and the names are derived. It formats as
// "[redacted salt]" with every fmt verb, so it cannot reach a log or an error
// message by accident; Hex is the one way to the bytes, for the metadata of
// a dataset whose salt is published.
type Salt struct{ raw []byte }

// ParseSalt decodes a hex salt, as whestbench's bytes.fromhex does for the
// metadata's "salt" field and WHEST_SEED_SALT. A BLAKE2b key has 1 to 64
// bytes; whestbench itself generates SaltBytes, 32. The errors name neither
// the text's source nor its content: callers say where it came from.
func ParseSalt(text string) (Salt, error) {
	b, err := hex.DecodeString(text)
	switch {
	case err != nil:
		return Salt{}, fmt.Errorf("is not a hex string (%d characters; expected %d hex digits)",
			len(text), 2*SaltBytes)
	case len(b) == 0:
		return Salt{}, fmt.Errorf("is empty: a salt is %d bytes, %d hex digits",
			SaltBytes, 2*SaltBytes)
	case len(b) > 64:
		return Salt{}, fmt.Errorf("is %d bytes: a BLAKE2b key has at most 64 "+
			"(whestbench salts have %d)", len(b), SaltBytes)
	}
	return Salt{raw: b}, nil
}

// GenerateSalt draws a SaltBytes salt from the OS CSPRNG, like whestbench's
// generate_salt, which calls secrets.token_bytes.
func GenerateSalt() Salt {
	b := make([]byte, SaltBytes)
	_, _ = io.ReadFull(rand.Reader, b) // crypto/rand aborts the program rather than fail
	return Salt{raw: b}
}

// IsZero reports whether s holds no salt.
func (s Salt) IsZero() bool { return len(s.raw) == 0 }

// Len is the salt's size in bytes.
func (s Salt) Len() int { return len(s.raw) }

// Hex is the salt as lowercase hex: metadata's "salt" field when the salt
// is published.
func (s Salt) Hex() string { return hex.EncodeToString(s.raw) }

// Digest is the lowercase hex SHA-256 of the salt's bytes, metadata's
// "salt_digest": it identifies a salt without revealing it.
func (s Salt) Digest() string {
	sum := sha256.Sum256(s.raw)
	return hex.EncodeToString(sum[:])
}

// Format keeps the salt out of every formatted string.
func (s Salt) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "[redacted salt]") }

// keyed is whestbench's _keyed_digest: BLAKE2b-64 keyed by the salt over the
// input seed as 8 big-endian bytes, read as a big-endian integer.
func (s Salt) keyed(person []byte, inputSeed uint64) uint64 {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], inputSeed)
	return binary.BigEndian.Uint64(blake2b(msg[:], s.raw, person, 8))
}

// DeriveV4 is protocol 4.0: the weight and sample streams of protocol 3.0,
// so weights and statistics equal a 3.0 bake's, with the estimator seed
// the low 32 bits and the name seed the low 63 bits of two keyed digests.
// It panics on a zero salt, which no caller may derive with.
func DeriveV4(inputSeed uint64, salt Salt) Streams {
	if salt.IsZero() {
		panic("seeds: protocol 4.0 derivation without a salt")
	}
	st := DeriveV3(inputSeed)
	st.EstimatorSeed = uint32(salt.keyed(personEstimator, inputSeed))
	st.NameSeed = int64(salt.keyed(personName, inputSeed) & (1<<63 - 1))
	return st
}
