// Package tlsutil makes the private CA and wildcard certificate that let the
// official SDKs reach `https://<port>-<id>.<domain>` on a self-hosted server:
// outside E2B_SANDBOX_URL mode the SDKs always use https, so a custom domain
// needs a certificate clients can be told to trust (NODE_EXTRA_CA_CERTS).
package tlsutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Files are the paths of the CA certificate and the server's key pair.
type Files struct {
	CACert     string
	ServerCert string
	ServerKey  string
}

// Ensure returns the CA and a server certificate for domain in dir, making
// them when missing, when the certificate does not cover the domain, or when
// it expires within 30 days. The CA is kept across runs so clients that
// trust it keep working.
func Ensure(dir, domain string, extraHosts ...string) (*Files, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating tls dir: %w", err)
	}
	f := &Files{
		CACert:     filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"),
		ServerKey:  filepath.Join(dir, "server-key.pem"),
	}
	caKeyPath := filepath.Join(dir, "ca-key.pem")
	ca, caKey, err := loadPair(f.CACert, caKeyPath)
	if err != nil {
		if ca, caKey, err = newCA(f.CACert, caKeyPath); err != nil {
			return nil, err
		}
	}
	names := serverNames(domain, extraHosts)
	if leaf, _, err := loadPair(f.ServerCert, f.ServerKey); err == nil && covers(leaf, names) &&
		time.Until(leaf.NotAfter) > 30*24*time.Hour && leaf.CheckSignatureFrom(ca) == nil {
		return f, nil
	}
	if err := newServerCert(f, ca, caKey, names); err != nil {
		return nil, err
	}
	return f, nil
}

// Config returns a server tls.Config offering h2 and http/1.1.
func Config(f *Files) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(f.ServerCert, f.ServerKey)
	if err != nil {
		return nil, fmt.Errorf("loading server certificate: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}, nil
}

func serverNames(domain string, extra []string) []string {
	names := []string{domain, "*." + domain, "localhost", "127.0.0.1"}
	return append(names, extra...)
}

func covers(c *x509.Certificate, names []string) bool {
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
				return false
			}
		} else if !slices.Contains(c.DNSNames, n) {
			return false
		}
	}
	return true
}

func newCA(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating CA key: %w", err)
	}
	tpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "warren local CA", Organization: []string{"warren"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing CA: %w", err)
	}
	if err := writePair(certPath, keyPath, der, key); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func newServerCert(f *Files, ca *x509.Certificate, caKey *ecdsa.PrivateKey, names []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating server key: %w", err)
	}
	tpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tpl.IPAddresses = append(tpl.IPAddresses, ip)
		} else {
			tpl.DNSNames = append(tpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("signing server certificate: %w", err)
	}
	return writePair(f.ServerCert, f.ServerKey, der, key)
}

func writePair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding key: %w", err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return fmt.Errorf("writing key: %w", err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return fmt.Errorf("writing certificate: %w", err)
	}
	return nil
}

func loadPair(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cpem, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	kpem, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(cpem)
	kb, _ := pem.Decode(kpem)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	return cert, key, err
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}
