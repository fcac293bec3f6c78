package e2e

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

// testCA is a certificate authority made for one test, in its own temp
// folder: the TLS tests need a CA the service is told to trust, and one it
// is not (ECDSA P-256 keys: generated in microseconds).
type testCA struct {
	dir    string
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pem    string // the CA certificate's PEM file
	serial int64
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{dir: t.TempDir(), cert: cert, key: key, serial: 1}
	ca.pem = filepath.Join(ca.dir, "ca.pem")
	writePEM(t, ca.pem, "CERTIFICATE", der)
	return ca
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	// Written beside and renamed: a service watching the file never reads
	// half of it.
	if err := os.WriteFile(path+".tmp", pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// leaf is a certificate the CA issued and its key, as PEM files.
type leaf struct {
	cert, key string
	pair      tls.Certificate
}

// issue writes <name>.pem and <name>-key.pem, a certificate for both server
// and client use, valid for the given IP addresses and DNS names (none for
// a client's); its common name is cn.
func (ca *testCA) issue(t *testing.T, name, cn string, ips []net.IP, dns []string) leaf {
	t.Helper()
	key := newKey(t)
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: ips, DNSNames: dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := leaf{cert: filepath.Join(ca.dir, name+".pem"), key: filepath.Join(ca.dir, name+"-key.pem")}
	// The key first: a service reloading on the certificate's change
	// finds the matching key already there.
	writePEM(t, l.key, "PRIVATE KEY", keyDER)
	writePEM(t, l.cert, "CERTIFICATE", der)
	l.pair = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return l
}

// loopback is the address every test server and service listens on.
var loopback = []net.IP{net.IPv4(127, 0, 0, 1)}

// clientTLS trusts ca and presents the given certificates (none, or one).
func (ca *testCA) clientTLS(certs ...leaf) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	c := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	for _, l := range certs {
		c.Certificates = append(c.Certificates, l.pair)
	}
	return c
}
