package mlps

import (
	"errors"
	"fmt"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/seeds"
)

// ParseBakeSalt decodes the hex salt of a protocol-4.0 bake. Bakes take
// seeds.SaltBytes bytes, the size whestbench generates, although a reader
// accepts any BLAKE2b key. Like seeds.ParseSalt, the error names neither the
// source nor the text.
func ParseBakeSalt(text string) (seeds.Salt, error) {
	s, err := seeds.ParseSalt(text)
	if err == nil && s.Len() != seeds.SaltBytes {
		return seeds.Salt{}, fmt.Errorf(
			"is %d bytes: bake with a %d-byte salt (%d hex digits), "+
				"the size whestbench generates; `openssl rand -hex %[2]d` makes one",
			s.Len(),
			seeds.SaltBytes,
			2*seeds.SaltBytes,
		)
	}
	return s, err
}

// ErrSaltUnset is EnvSalt's error when dataset.SaltEnv is empty; callers
// wrap it with what the salt was needed for.
var ErrSaltUnset = errors.New(dataset.SaltEnv + " is not set")

// EnvSalt is a bake's salt from dataset.SaltEnv, read with getenv under
// ParseBakeSalt's rule. The starter, the local CLI's withheld salt and
// every GPU worker read it so. Its errors name the variable: ErrSaltUnset,
// or what is wrong with the text, never the text itself.
func EnvSalt(getenv func(string) string) (seeds.Salt, error) {
	return envSalt(getenv, ParseBakeSalt)
}

// envSalt is the one reading of dataset.SaltEnv: ErrSaltUnset when it is
// empty, else its text under parse, whose errors it prefixes with the
// variable's name. A bake parses with ParseBakeSalt; DatasetSalt, a reader
// of a finished dataset, with seeds.ParseSalt, since whestbench reads any
// BLAKE2b key.
func envSalt(
	getenv func(string) string,
	parse func(string) (seeds.Salt, error),
) (seeds.Salt, error) {
	text := getenv(dataset.SaltEnv)
	if text == "" {
		return seeds.Salt{}, ErrSaltUnset
	}
	s, err := parse(text)
	if err != nil {
		return seeds.Salt{}, fmt.Errorf("%s %w", dataset.SaltEnv, err)
	}
	return s, nil
}

// ErrSaltWithheld is DatasetSalt's error when a withheld salt is not in the
// environment: the dataset's weights and statistics can still be checked.
var ErrSaltWithheld = errors.New("salt withheld")

// DatasetSalt is whestbench's resolve_salt for a protocol-4.0 dataset:
// the salt from the metadata or, when it is withheld, from dataset.SaltEnv
// read with getenv, checked against salt_digest whenever the metadata
// records one. Every failure is an error; a withheld salt missing from the
// environment is ErrSaltWithheld. The rule is
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/seeds.py.
func DatasetSalt(p dataset.SeedProtocol, getenv func(string) string) (seeds.Salt, error) {
	where := "metadata seed_protocol.salt"
	var salt seeds.Salt
	var err error
	if p.SaltWithheld() {
		where = dataset.SaltEnv
		if salt, err = envSalt(getenv, seeds.ParseSalt); errors.Is(err, ErrSaltUnset) {
			return seeds.Salt{}, fmt.Errorf(
				"%w: this dataset records only its salt's SHA-256%s; "+
					"set %s to the salt's hex to derive its seeds and names",
				ErrSaltWithheld,
				saltIDText(p.SaltID),
				dataset.SaltEnv,
			)
		}
	} else if salt, err = seeds.ParseSalt(p.Salt); err != nil {
		err = fmt.Errorf("%s %v", where, err)
	}
	if err != nil {
		return seeds.Salt{}, err
	}
	if p.SaltDigest != "" && salt.Digest() != p.SaltDigest {
		return seeds.Salt{}, fmt.Errorf(
			"the salt in %s has SHA-256 %s, but the dataset's salt%s has %s: "+
				"it is another salt, and would derive other seeds and names",
			where,
			salt.Digest(),
			saltIDText(p.SaltID),
			p.SaltDigest,
		)
	}
	return salt, nil
}

func saltIDText(id string) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf(" (id %q)", id)
}
