// Package keytls turns the cluster's shared secret into TLS 1.3, so that
// every marsfs connection that leaves loopback (a 9P client's, a
// scheduler's to its workers, a worker's to another for chunks) is
// authenticated both ways and encrypted by Go's crypto/tls, with no
// cipher of our own.
//
// The construction: HKDF-SHA256 of the cluster key (wire.DeriveKey of the
// secret) gives an Ed25519 seed, hence one key pair that every holder of
// the secret derives alike; a self-signed certificate of its public key
// (Ed25519 signatures are deterministic, and every field is fixed, so it
// is the same bytes everywhere) is presented by both ends, the server
// asking for the client's. Each end accepts the other only if the
// certificate it presents carries that same public key: a pin, in place
// of a certificate authority. TLS 1.3 makes each end sign the handshake
// transcript with the certificate's private key (CertificateVerify), so
// an end that presents the pinned certificate without the secret cannot
// finish the handshake, and the session keys come from an ephemeral
// X25519 exchange, so recorded traffic stays secret even if the secret
// leaks later. TLS 1.3 also encrypts the certificates themselves.
//
// What it does not protect against: a weak secret. Anyone who completes a
// handshake sees the public key and can test guesses of the secret
// offline, as with any password-derived key; use a random one
// (head -c 32 /dev/urandom | base64 > key).
package keytls

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"
)

// info separates this use of the key from its others (gossip, the
// workers' HMAC handshake).
const info = "marsfs tls ed25519 v1"

// A Pair is the TLS identity every holder of one cluster key shares.
type Pair struct {
	pub  ed25519.PublicKey
	cert tls.Certificate
}

// New derives the pair of key.
func New(key []byte) (*Pair, error) {
	if len(key) == 0 {
		return nil, errors.New("keytls: no key")
	}
	seed, err := hkdf.Key(sha256.New, key, nil, info, ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "marsfs cluster"},
		NotBefore:             time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{ServerName},
	}
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, pub, priv)
	if err != nil {
		return nil, fmt.Errorf("keytls: certificate: %w", err)
	}
	return &Pair{pub: pub, cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}}, nil
}

// ServerName is the name clients ask for: there is one identity, whatever
// the address.
const ServerName = "marsfs"

// ErrPeerKey is the error of a handshake whose peer holds another key.
var ErrPeerKey = errors.New("the peer's certificate is not of this cluster's key (wrong key)")

// verify accepts a peer whose leaf certificate carries the pair's key.
func (p *Pair) verify(raw [][]byte, _ [][]*x509.Certificate) error {
	if len(raw) == 0 {
		return errors.New("the peer presented no certificate (it has no key)")
	}
	c, err := x509.ParseCertificate(raw[0])
	if err != nil {
		return err
	}
	pub, ok := c.PublicKey.(ed25519.PublicKey)
	if !ok || !bytes.Equal(pub, p.pub) {
		return ErrPeerKey
	}
	return nil
}

func (p *Pair) config() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{p.cert},
		// The pin in VerifyPeerCertificate stands for the chain check a
		// certificate authority would make: no name nor chain to check.
		InsecureSkipVerify:    true,
		VerifyPeerCertificate: p.verify,
		ServerName:            ServerName,
	}
}

// ServerConfig is the configuration of the accepting end: it asks for the
// client's certificate and accepts only the pinned one.
func (p *Pair) ServerConfig() *tls.Config {
	c := p.config()
	c.ClientAuth = tls.RequireAnyClientCert
	return c
}

// ClientConfig is the configuration of the dialing end.
func (p *Pair) ClientConfig() *tls.Config { return p.config() }

// Client runs the client's handshake on c, with deadline as its bound.
func (p *Pair) Client(c net.Conn, deadline time.Time) (*tls.Conn, error) {
	tc := tls.Client(c, p.ClientConfig())
	return tc, handshake(tc, deadline)
}

// Server runs the server's handshake on c, with deadline as its bound.
func (p *Pair) Server(c net.Conn, deadline time.Time) (*tls.Conn, error) {
	tc := tls.Server(c, p.ServerConfig())
	return tc, handshake(tc, deadline)
}

func handshake(tc *tls.Conn, deadline time.Time) error {
	tc.SetDeadline(deadline)
	err := tc.Handshake()
	tc.SetDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("TLS with the cluster key: %w", err)
	}
	return nil
}

// LooksLikeTLS reports whether b, the first byte a client sent, opens a
// TLS handshake record (content type 22) rather than a 9P message or the
// workers' handshake ("MFS1"): a listener can then serve both.
func LooksLikeTLS(b byte) bool { return b == 0x16 }

// pairs caches the pair of each key: a derivation signs a certificate.
var pairs sync.Map // string(key) -> *Pair

// For returns the pair of key, derived once per process.
func For(key []byte) (*Pair, error) {
	if p, ok := pairs.Load(string(key)); ok {
		return p.(*Pair), nil
	}
	p, err := New(key)
	if err != nil {
		return nil, err
	}
	pairs.Store(string(key), p)
	return p, nil
}
