package seeds

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	xblake2b "golang.org/x/crypto/blake2b"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func seq(n, from int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(from + i)
	}
	return b
}

// RFC 7693 Appendix A, and the first and last keyed entries of the BLAKE2
// reference package's blake2b-kat.txt (key 00..3f, input 00..n-1).
func TestBlake2bPublishedVectors(t *testing.T) {
	for _, c := range []struct {
		name     string
		msg, key []byte
		want     string
	}{
		{
			name: "RFC 7693 abc",
			msg:  []byte("abc"),
			want: "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
		},
		{
			name: "KAT keyed, empty input",
			key:  seq(64, 0),
			want: "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568",
		},
		{
			name: "KAT keyed, 255 bytes",
			msg:  seq(255, 0),
			key:  seq(64, 0),
			want: "142709d62e28fcccd0af97fad0f8465b971e82201dc51070faa0372aa43e92484be1c1e73ba10906d5d1853db6a4106e0a7bf9800d373d6dee2d46d62ef2a461",
		},
	} {
		if got := hex.EncodeToString(blake2b(c.msg, c.key, nil, 64)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// Personalised vectors from CPython 3's hashlib.blake2b(msg, digest_size=n,
// key=k, person=p), with msg = bytes(i % 251 for i in range(len)) and
// key = bytes((i + 1) % 256 for i in range(klen)): lengths around the block
// size, keys of 0..64 bytes, persons of 0..16 bytes, digests of 1..64 bytes.
func TestBlake2bPersonalMatchesHashlib(t *testing.T) {
	for _, c := range []struct {
		msgLen, keyLen int
		person         string
		size           int
		want           string
	}{
		{
			msgLen: 0,
			keyLen: 0,
			person: "",
			size:   64,
			want:   "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce",
		},
		{3, 0, "whest-4.0-est", 8, "0ff989d1ba2ff700"},
		{8, 32, "whest-4.0-est", 8, "0911907cf13b43c8"},
		{8, 32, "whest-4.0-name", 8, "7df1aadc8e2e9225"},
		{
			msgLen: 127,
			keyLen: 64,
			person: "0123456789abcdef",
			size:   64,
			want:   "23f304338a367c7167ae7d43440202f83984a9c561b8d91497df7b4c78c45bb7ffad2e74f06d331dcb5b573473cd9499567062f0b5d6b9c4bd50e6a2ed68374b",
		},
		{128, 1, "p", 32, "60fcb4604fc707803871277835108e4e13df718a4ecccd182ca68c04884cc781"},
		{129, 32, "whest-4.0-name", 20, "2d871a2e8a31c77be7e7f0f747a9ca057da74d30"},
		{256, 16, "", 8, "49391ec59a1e9b40"},
		{1000, 64, "~~~~~~~~~~~~~~~~", 1, "c8"},
	} {
		msg := make([]byte, c.msgLen)
		for i := range msg {
			msg[i] = byte(i % 251)
		}
		got := hex.EncodeToString(blake2b(msg, seq(c.keyLen, 1), []byte(c.person), c.size))
		if got != c.want {
			t.Errorf("len %d key %d person %q size %d: %s, want %s",
				c.msgLen, c.keyLen, c.person, c.size, got, c.want)
		}
	}
}

// Without a personalisation the parameter block is the one
// golang.org/x/crypto/blake2b builds, so the two must agree everywhere.
func TestBlake2bMatchesXCrypto(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		msg := make([]byte, r.IntN(600))
		key := make([]byte, r.IntN(65))
		for _, b := range [][]byte{msg, key} {
			for j := range b {
				b[j] = byte(r.Uint32())
			}
		}
		size := 1 + r.IntN(64)
		h, err := xblake2b.New(size, key)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(msg)
		if got, want := blake2b(msg, key, nil, size), h.Sum(nil); !bytes.Equal(got, want) {
			t.Fatalf("case %d (msg %d, key %d, size %d): %x, want %x",
				i, len(msg), len(key), size, got, want)
		}
	}
}

// whestbench's anchors,
// https://github.com/AIcrowd/whestbench/blob/main/tests/test_seeds_v4.py.
func TestDeriveV4Anchor(t *testing.T) {
	salt := Salt{raw: seq(32, 0)}
	st := DeriveV4(6004799503160661, salt)
	if st.EstimatorSeed != 1914761819 || st.NameSeed != 1338665652895792380 {
		t.Errorf("estimator seed %d, name seed %d; want 1914761819, 1338665652895792380",
			st.EstimatorSeed, st.NameSeed)
	}
}

// More inputs under the same salt, computed with CPython's hashlib.blake2b
// exactly as whestbench's seeds.py does.
func TestDeriveV4MatchesHashlib(t *testing.T) {
	salt := Salt{raw: seq(32, 0)}
	for _, c := range []struct {
		input    uint64
		est      uint32
		nameSeed int64
	}{
		{1001, 2910499503, 8636681765737103000},
		{2002, 534264472, 5432579338256713075},
		{3003, 1873183096, 405987260054781391},
		{4004, 1923171525, 3285554979526065152},
	} {
		if st := DeriveV4(c.input, salt); st.EstimatorSeed != c.est || st.NameSeed != c.nameSeed {
			t.Errorf("seed %d: estimator %d name %d; want %d, %d",
				c.input, st.EstimatorSeed, st.NameSeed, c.est, c.nameSeed)
		}
	}
}

// Protocol 4.0 changes only MLP.seed and the name: the data streams are
// 3.0's (tests/test_seeds_v4.py "data streams untouched").
func TestDeriveV4KeepsTheDataStreams(t *testing.T) {
	salt := GenerateSalt()
	for _, s := range []uint64{0, 1001, 6717184059027789272, 1<<63 - 1} {
		v3, v4 := DeriveV3(s), DeriveV4(s, salt)
		if v4.Weight.GenerateState32(8)[7] != v3.Weight.GenerateState32(8)[7] ||
			v4.Sample.GenerateState32(8)[7] != v3.Sample.GenerateState32(8)[7] {
			t.Errorf("seed %d: 4.0 data streams differ from 3.0's", s)
		}
		if v3.NameSeed != int64(v3.EstimatorSeed) {
			t.Errorf("seed %d: 3.0 name seed %d is not the estimator seed %d",
				s, v3.NameSeed, v3.EstimatorSeed)
		}
		if v4.NameSeed < 0 {
			t.Errorf("seed %d: name seed %d is negative", s, v4.NameSeed)
		}
	}
}

func TestDeriveV4DependsOnTheSaltAndSeparatesDomains(t *testing.T) {
	a, b := Salt{raw: seq(32, 0)}, Salt{raw: seq(32, 1)}
	sa, sb := DeriveV4(42, a), DeriveV4(42, b)
	if sa.EstimatorSeed == sb.EstimatorSeed || sa.NameSeed == sb.NameSeed {
		t.Error("two salts give the same seeds")
	}
	// The name seed is not the estimator seed extended: different persons.
	if uint32(sa.NameSeed) == sa.EstimatorSeed {
		t.Error("name seed and estimator seed share their low 32 bits")
	}
}

func TestParseSalt(t *testing.T) {
	good := strings.Repeat("0a", 32)
	s, err := ParseSalt(strings.ToUpper(good))
	if err != nil || s.Hex() != good || s.Len() != SaltBytes {
		t.Fatalf("ParseSalt(%q) = %d bytes %v", good, s.Len(), err)
	}
	sum := sha256.Sum256(mustHex(t, good))
	if s.Digest() != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %s", s.Digest())
	}
	if s, err := ParseSalt("ab"); err != nil || s.Len() != 1 {
		t.Errorf("a 1-byte key is a valid BLAKE2b key: %v", err)
	}
	for _, bad := range []string{"", "0", "zz", strings.Repeat("00", 65)} {
		if _, err := ParseSalt(bad); err == nil {
			t.Errorf("ParseSalt(%q) accepted", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("ParseSalt(%q): the error quotes the text: %v", bad, err)
		}
	}
}

func TestSaltNeverFormats(t *testing.T) {
	s := GenerateSalt()
	if s.Len() != SaltBytes || s.IsZero() {
		t.Fatalf("generated salt has %d bytes", s.Len())
	}
	if GenerateSalt().Hex() == s.Hex() {
		t.Error("two generated salts are equal")
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%d", "%q"} {
		out := fmt.Sprintf(verb, s) + fmt.Sprintf(verb, struct{ S Salt }{s}) + fmt.Sprintf(verb, &s)
		if strings.Contains(strings.ToLower(out), s.Hex()[:8]) ||
			strings.Contains(out, fmt.Sprint(s.raw[0:4])) {
			t.Errorf("%s reveals the salt: %s", verb, out)
		}
	}
}

func TestDeriveV4RefusesAZeroSalt(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("DeriveV4 with a zero salt did not panic")
		}
	}()
	DeriveV4(1, Salt{})
}
