// Package tlsconf builds the TLS client configurations of the Temporal and S3
// connections from PEM files, and explains TLS failures in words an operator
// can act on. Every problem names the config key that caused it and the fix,
// because "x509: certificate signed by unknown authority" alone does not say
// which of four files to change.
package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/whestbake/whestbake/internal/readlimit"
)

// Files are the PEM files of one TLS client. Empty fields are unused: no CA
// file means the system roots, no cert and key means no client certificate.
type Files struct {
	CA, Cert, Key string
	// ServerName overrides the name the server's certificate is checked
	// against, by default the host of the address.
	ServerName string
}

// Keys are the config keys Files came from, for the messages. Enable is
// the key that turns TLS on; ServerName may be "" where there is none.
type Keys struct {
	Enable, CA, Cert, Key, ServerName string
}

// Problem is one thing wrong with the files, under its config key.
type Problem struct {
	Key, Msg string
}

// Error is every Problem found at once.
type Error []Problem

// addf records a Problem under key.
func (e *Error) addf(key, format string, a ...any) {
	*e = append(*e, Problem{key, fmt.Sprintf(format, a...)})
}

// problemf is an Error of the one Problem under key.
func problemf(key, format string, a ...any) Error {
	var e Error
	e.addf(key, format, a...)
	return e
}

// The fixes that several messages end with.
const (
	bothFilesFix  = "mutual TLS needs both the client certificate and its private key"
	serverCAFix   = "use the PEM bundle of the server's CA"
	noCertificate = "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
)

func (e Error) Error() string {
	var b strings.Builder
	for i, p := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Key + " " + p.Msg)
	}
	return b.String()
}

// Client reads f into a TLS client configuration, checking what can be
// checked before the first connection: the files exist and parse, the key
// belongs to the certificate, and the certificate is valid at now. A server
// rejects an expired client certificate with a bare "bad certificate" alert,
// so saying it here saves a puzzling failure. The error is an Error.
func Client(f Files, k Keys, now time.Time) (*tls.Config, error) {
	var probs Error
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName}
	if f.CA != "" {
		pool, err := caPool(f.CA)
		if err != nil {
			probs.addf(k.CA, "%v", err)
		}
		cfg.RootCAs = pool
	}
	switch {
	case f.Cert != "" && f.Key == "":
		probs.addf(k.Key, "is empty but %s is set: "+bothFilesFix, k.Cert)
	case f.Cert == "" && f.Key != "":
		probs.addf(k.Cert, "is empty but %s is set: "+bothFilesFix, k.Key)
	case f.Cert != "":
		cert, err := keyPair(f.Cert, f.Key, k, now)
		if err != nil {
			probs = append(probs, err...)
		} else {
			cfg.Certificates = []tls.Certificate{cert}
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return cfg, nil
}

// MaxPEMFileBytes caps a CA bundle, certificate or key file, which an
// operator names in the config and could point anywhere: a system's whole
// CA bundle is a few hundred KiB.
const MaxPEMFileBytes = 4 << 20

// caPool reads a PEM bundle of CA certificates.
func caPool(file string) (*x509.CertPool, error) {
	data, err := readlimit.File(file, MaxPEMFileBytes)
	if err != nil {
		return nil, fmt.Errorf("cannot be read (%v): "+
			"point it at the PEM bundle of the CA that signed the server's certificate", err)
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf(
				"%s holds a certificate that does not parse (%v): "+serverCAFix,
				file,
				err,
			)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s "+noCertificate+": "+serverCAFix, file)
	}
	return pool, nil
}

// keyPair loads a client certificate and its key, telling apart the
// failures tls.LoadX509KeyPair lumps together.
func keyPair(certFile, keyFile string, k Keys, now time.Time) (tls.Certificate, Error) {
	var probs Error
	certPEM, err := readlimit.File(certFile, MaxPEMFileBytes)
	if err != nil {
		probs.addf(k.Cert, "cannot be read (%v): point it at the PEM client certificate", err)
	}
	keyPEM, err := readlimit.File(keyFile, MaxPEMFileBytes)
	if err != nil {
		probs.addf(k.Key, "cannot be read (%v): point it at the PEM private key of %s", err, k.Cert)
	}
	if probs != nil {
		return tls.Certificate{}, probs
	}
	var leaf *x509.Certificate
	if b, _ := pem.Decode(certPEM); b == nil || b.Type != "CERTIFICATE" {
		probs.addf(
			k.Cert,
			"%s "+noCertificate+": point it at the client certificate, not the key or the CA",
			certFile,
		)
	} else if leaf, err = x509.ParseCertificate(b.Bytes); err != nil {
		probs.addf(
			k.Cert,
			"%s does not parse (%v): issue the client certificate again",
			certFile,
			err,
		)
	}
	if b, _ := pem.Decode(keyPEM); b == nil || !strings.Contains(b.Type, "PRIVATE KEY") {
		probs.addf(
			k.Key,
			"%s holds no PEM private key (-----BEGIN ... PRIVATE KEY-----): "+
				"point it at the key of %s",
			keyFile,
			k.Cert,
		)
	}
	if probs != nil {
		return tls.Certificate{}, probs
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if strings.Contains(err.Error(), "does not match") {
			return cert, problemf(
				k.Key,
				"%s is not the private key of the certificate in %s: "+
					"use the key the certificate was issued for",
				keyFile,
				certFile,
			)
		}
		return cert, problemf(
			k.Key,
			"%s cannot be used with %s (%v): "+
				"use an unencrypted PKCS#8, PKCS#1 or EC private key in PEM",
			keyFile,
			certFile,
			err,
		)
	}
	switch {
	case now.After(leaf.NotAfter):
		return cert, problemf(
			k.Cert,
			"%s expired on %s: issue a new client certificate (the server rejects expired ones)",
			certFile,
			leaf.NotAfter.UTC().Format(time.RFC3339),
		)
	case now.Before(leaf.NotBefore):
		return cert, problemf(
			k.Cert,
			"%s is not valid before %s: check this host's clock, or wait",
			certFile,
			leaf.NotBefore.UTC().Format(time.RFC3339),
		)
	}
	cert.Leaf = leaf
	return cert, nil
}

// Explain turns a failed TLS handshake, or the first read after it, where a
// server's rejection of the client certificate shows in TLS 1.3, into a
// sentence naming the key to change; it returns "" for errors that are not
// about TLS. clientCert says whether a client certificate was configured.
func Explain(err error, k Keys, clientCert bool) string {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unknown):
		fix := "set " + k.CA + " to the PEM bundle of the CA that signed it"
		return fmt.Sprintf(
			"the server's certificate is signed by an authority "+
				"this client does not trust (%v): %s",
			err,
			fix,
		)
	case errors.As(err, &hostname):
		names := hostname.Certificate.DNSNames
		for _, ip := range hostname.Certificate.IPAddresses {
			names = append(names, ip.String())
		}
		fix := "set " + k.ServerName + " to one of those names, or fix the address"
		if k.ServerName == "" {
			fix = "use one of those names in the address"
		}
		return fmt.Sprintf(
			"the server's certificate is for %s, not %q: %s",
			strings.Join(names, ", "),
			hostname.Host,
			fix,
		)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Sprintf(
			"the server's certificate is expired or not yet valid (%v): "+
				"renew the server's certificate, or check this host's clock",
			err,
		)
	case errors.As(err, &record):
		return fmt.Sprintf(
			"the server does not speak TLS on this port: point the address at its TLS port, "+
				"or turn TLS off (%s) if the server really is plain text",
			k.Enable,
		)
	}
	switch remoteAlert(err) {
	case "certificate required":
		if clientCert {
			// crypto/tls sends only a certificate issued by one of the CAs
			// the server lists as acceptable, and none otherwise.
			return fmt.Sprintf(
				"the server rejected the client certificate in %s (%v): "+
					"it is not issued by a CA the server trusts for clients, "+
					"so it was not even sent: "+
					"use one that is, with its key in %s",
				k.Cert,
				err,
				k.Key,
			)
		}
		return fmt.Sprintf(
			"the server requires a client certificate (%v): set %s and %s (mutual TLS)",
			err,
			k.Cert,
			k.Key,
		)
	case "bad certificate",
		"unknown certificate authority",
		"unknown certificate",
		"unsupported certificate":
		return fmt.Sprintf(
			"the server rejected the client certificate in %s (%v): "+
				"use a certificate issued by a CA the server trusts (its client CA), "+
				"with its key in %s",
			k.Cert,
			err,
			k.Key,
		)
	case "expired certificate":
		return fmt.Sprintf(
			"the server says the client certificate in %s expired (%v): issue a new one",
			k.Cert,
			err,
		)
	case "revoked certificate":
		return fmt.Sprintf(
			"the server says the client certificate in %s was revoked (%v): issue a new one",
			k.Cert,
			err,
		)
	}
	return ""
}

// remoteAlert is the text of the TLS alert a peer sent, or "". crypto/tls
// reports a received alert as a net.OpError "remote error" around an
// unexported type, and tls.AlertError is for QUIC only, so the alert is read
// from the error's text, which crypto/tls words once per alert number.
func remoteAlert(err error) string {
	const prefix = "remote error: tls: "
	if err == nil {
		return ""
	}
	msg := err.Error()
	i := strings.LastIndex(msg, prefix)
	if i < 0 {
		return ""
	}
	text := msg[i+len(prefix):]
	if j := strings.IndexAny(text, "\"\n;)"); j >= 0 {
		text = text[:j]
	}
	return strings.TrimSpace(text)
}

// probeTimeout bounds each diagnostic connection: they run after a failure,
// to explain it, and must not turn a quick error into a slow one.
const probeTimeout = 5 * time.Second

// Handshake connects to addr with cfg and reports the first TLS failure: of
// the handshake itself, or, since TLS 1.3 lets the client finish before the
// server has checked the client's certificate, of the server's first answer.
// To get an answer it sends the HTTP/2 client preface, which both Temporal's
// gRPC and S3 over h2 understand. It returns nil when the server answered.
func Handshake(ctx context.Context, addr string, cfg *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	c := cfg.Clone()
	c.NextProtos = []string{"h2"}
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: c}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if _, err := io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); err != nil {
		return err
	}
	var b [1]byte
	if _, err := conn.Read(b[:]); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return nil
}

// SpeaksTLS reports whether the server at addr answers a TLS ClientHello,
// to tell a client that talks plain text to a TLS port what is wrong.
func SpeaksTLS(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	// Nothing is sent after the handshake and nothing is trusted: the probe
	// asks only whether a TLS server answers, so certificates do not matter.
	d := tls.Dialer{
		NetDialer: &net.Dialer{},
		Config:    &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}},
	}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		conn.Close()
		return true
	}
	return remoteAlert(err) != "" // a TLS server that wants a client certificate
}
