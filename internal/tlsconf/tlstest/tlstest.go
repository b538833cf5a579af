// Package tlstest makes throwaway certificate authorities and certificates
// for tests with crypto/x509 and ECDSA P-256, written as PEM files the way
// an operator would mount them.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority private to one test.
type CA struct {
	Cert   *x509.Certificate
	Key    *ecdsa.PrivateKey
	CAFile string // PEM of Cert
	dir    string
	serial int64
}

// NewCA makes a CA and writes its certificate to dir/<name>-ca.pem.
func NewCA(t testing.TB, dir, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name + " test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{
		Cert:   cert,
		Key:    key,
		dir:    dir,
		serial: 1,
	}
	ca.CAFile = writePEM(t, filepath.Join(dir, name+"-ca.pem"), "CERTIFICATE", der)
	return ca
}

// Pool is a cert pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf is a certificate issued by a CA, with its files.
type Leaf struct {
	CertFile, KeyFile string
	TLS               tls.Certificate
}

// LeafOptions shape a certificate; the zero value is a client certificate
// valid now.
type LeafOptions struct {
	Server    bool          // server auth for Hosts, else client auth
	Hosts     []string      // DNS names and IPs, for server certificates
	NotBefore time.Time     // zero: an hour ago
	Validity  time.Duration // zero: a day
}

// Issue makes a certificate named name under the CA and writes
// dir/<name>.pem and dir/<name>-key.pem.
func (ca *CA) Issue(t testing.TB, name string, o LeafOptions) Leaf {
	t.Helper()
	key := newKey(t)
	ca.serial++
	nb := o.NotBefore
	if nb.IsZero() {
		nb = time.Now().Add(-time.Hour)
	}
	validity := o.Validity
	if validity == 0 {
		validity = 24 * time.Hour
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    nb,
		NotAfter:     nb.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if o.Server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range o.Hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := Leaf{
		CertFile: writePEM(t, filepath.Join(ca.dir, name+".pem"), "CERTIFICATE", der),
		KeyFile:  writePEM(t, filepath.Join(ca.dir, name+"-key.pem"), "PRIVATE KEY", keyDER),
	}
	if l.TLS, err = tls.LoadX509KeyPair(l.CertFile, l.KeyFile); err != nil {
		t.Fatal(err)
	}
	return l
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writePEM(t testing.TB, path, typ string, der []byte) string {
	t.Helper()
	// 0600: private keys are written here too, as an operator would keep them.
	data := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
