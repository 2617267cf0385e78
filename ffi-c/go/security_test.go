// TLS, mutual TLS and token authentication against a secure broker: TLS on a
// free port, client certificates signed by the test CA, and two users
// (go-admin with every permission, go-reader with topic.read only). The
// certificates are made at test time by cursus-test-pki
// ($CURSUS_TEST_PKI_BIN); the broker is $CURSUS_BROKER_BIN, started on first
// use and stopped when TestMain ends. $CURSUS_TEST_SECURE_BROKER with
// $CURSUS_TEST_PKI (what ffi-c/tests-c/with-broker.sh exports, users
// ffi-admin and ffi-reader) uses a running one instead.

package cursus

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// secure describes the secure broker the tests of this file use.
type secure struct {
	addr, pki           string
	admin, adminToken   string
	reader, readerToken string
	err                 error
	cmd                 *exec.Cmd
	dir                 string
}

var (
	secureOnce   sync.Once
	secureBroker secure
)

// secureFor returns the secure broker, starting it on first use; the test
// fails when there is none to use.
func secureFor(t testing.TB) *secure {
	t.Helper()
	secureOnce.Do(func() { secureBroker = startSecureBroker() })
	if secureBroker.err != nil {
		// Never a skip: make test-go always provides the broker and the
		// PKI tool, and a security test that does not run proves nothing.
		t.Fatal(secureBroker.err)
	}
	return &secureBroker
}

var errNoSecureBroker = errors.New("no secure broker: set CURSUS_TEST_PKI_BIN (path of cursus-test-pki) " +
	"and CURSUS_BROKER_BIN, or CURSUS_TEST_SECURE_BROKER and CURSUS_TEST_PKI")

func startSecureBroker() secure {
	if addr, pki := os.Getenv("CURSUS_TEST_SECURE_BROKER"), os.Getenv("CURSUS_TEST_PKI"); addr != "" && pki != "" {
		return secure{addr: addr, pki: pki, admin: "ffi-admin", adminToken: "ffi-admin-token",
			reader: "ffi-reader", readerToken: "ffi-reader-token"}
	}
	pkiBin, brokerBin := os.Getenv("CURSUS_TEST_PKI_BIN"), os.Getenv("CURSUS_BROKER_BIN")
	if pkiBin == "" || brokerBin == "" {
		return secure{err: errNoSecureBroker}
	}
	s := secure{admin: "go-admin", adminToken: "go-admin-token", reader: "go-reader", readerToken: "go-reader-token"}
	dir, err := os.MkdirTemp("", "cursus-go-secure")
	if err != nil {
		return secure{err: err}
	}
	s.dir, s.pki = dir, filepath.Join(dir, "pki")
	fail := func(err error) secure {
		s.stop()
		return secure{err: err}
	}
	if out, err := exec.Command(pkiBin, s.pki).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("cursus-test-pki: %v: %s", err, out))
	}
	// TLS only: every connection the tests make to it is a TLS one.
	config := fmt.Sprintf(`listen = "off"
tls_listen = "127.0.0.1:0"
tls_cert_file = %q
tls_key_file = %q
tls_client_ca_file = %q
enable_sasl = true

[[users]]
principal = %q
token = %q
permissions = ["*"]

[[users]]
principal = %q
token = %q
permissions = ["topic.read"]
`, filepath.Join(s.pki, "server.pem"), filepath.Join(s.pki, "server.key"), filepath.Join(s.pki, "ca.pem"),
		s.admin, s.adminToken, s.reader, s.readerToken)
	configFile := filepath.Join(dir, "broker.toml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		return fail(err)
	}
	s.cmd = exec.Command(brokerBin, "--config", configFile, "--health-listen", "127.0.0.1:0",
		"--data-dir", filepath.Join(dir, "data"))
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return fail(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		return fail(errors.New("the secure broker did not start"))
	}
	banner := sc.Text()
	go func() { // keeps the broker's stdout drained
		for sc.Scan() {
		}
	}()
	for _, f := range strings.Fields(banner) {
		if a, ok := strings.CutPrefix(f, "tls_addr="); ok {
			s.addr = a
		}
	}
	if s.addr == "" {
		return fail(fmt.Errorf("the secure broker reports no tls_addr: %q", banner))
	}
	return s
}

// stop ends the broker this file started (if any) and removes its files.
func (s *secure) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
		s.dir = ""
	}
}

// stopSecureBroker is called when TestMain ends.
func stopSecureBroker() { secureBroker.stop() }

// options for the secure broker: TLS trusting ca (a file of the PKI), the
// client certificate when clientCert, and principal's token.
func (s *secure) options(ca string, clientCert bool, principal, token string) []Option {
	opts := []Option{
		WithBootstrap(s.addr),
		WithOption("tls", "true"),
		WithOption("tls_ca_file", filepath.Join(s.pki, ca)),
		WithOption("principal", principal),
		WithOption("token", token),
		WithOption("connect_timeout_ms", "10000"),
	}
	if clientCert {
		opts = append(opts, WithOption("tls_cert_file", filepath.Join(s.pki, "client.pem")),
			WithOption("tls_key_file", filepath.Join(s.pki, "client.key")))
	}
	return opts
}

func (s *secure) adminOptions() []Option { return s.options("ca.pem", true, s.admin, s.adminToken) }

// asError is err as an *Error of class authorization with code, or fails.
func asAuthorizationError(t *testing.T, err error, code string) *Error {
	t.Helper()
	var ce *Error
	if !errors.Is(err, ErrAuthorization) || !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("want an authorization error %s, got %v", code, err)
	}
	if ce.Status != StatusAuthorization || ce.Class != "authorization" {
		t.Fatalf("status %v, class %q: %v", ce.Status, ce.Class, err)
	}
	return ce
}

func TestSecureMutualTLSAndTokenProduceAndConsume(t *testing.T) {
	s := secureFor(t)
	ctx := ctxT(t)
	topic, group := unique("go-secure"), unique("go-secure-group")
	a, err := NewAdmin(ctx, s.adminOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.CreateTopic(ctx, topic, 1); err != nil {
		t.Fatal(err)
	}
	p, err := NewProducer(ctx, s.adminOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	m, err := p.Send(ctx, Record{Topic: topic, Partition: 0, Key: []byte("k"), Value: []byte("over-tls")})
	if err != nil || m.Offset != 0 {
		t.Fatalf("send: %+v, %v", m, err)
	}
	c, err := NewConsumer(ctx, append(s.adminOptions(), WithGroup(group), WithOption("fetch_max_wait_ms", "50"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	got, err := c.Poll(ctx) // ctx's deadline is the hang guard
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Value) != "over-tls" || string(got.Key) != "k" || got.Offset != 0 {
		t.Fatalf("consumed %+v", got)
	}
}

func TestSecureWrongTokenIsAuthenticationFailed(t *testing.T) {
	s := secureFor(t)
	ctx := ctxT(t)
	const secret = "not-the-token-go-s3cr3t"
	_, err := NewAdmin(ctx, s.options("ca.pem", true, s.admin, secret)...)
	ce := asAuthorizationError(t, err, "authentication_failed")
	if ce.Retryable || ce.Fields["principal"] != s.admin {
		t.Fatalf("retryable %v, fields %v", ce.Retryable, ce.Fields)
	}
	// The token never shows in the error, whatever the verb.
	for _, text := range []string{err.Error(), fmt.Sprintf("%v %+v %#v", err, err, err)} {
		if strings.Contains(text, secret) {
			t.Fatalf("the token shows in %q", text)
		}
	}
	if _, err := NewProducer(ctx, s.options("ca.pem", true, s.admin, secret)...); !errors.Is(err, ErrAuthorization) {
		t.Fatalf("producer with a wrong token: %v", err)
	}
}

func TestSecureNoClientCertificateIsRefused(t *testing.T) {
	s := secureFor(t)
	_, err := NewAdmin(ctxT(t), s.options("ca.pem", false, s.admin, s.adminToken)...)
	ce := asAuthorizationError(t, err, "tls_handshake_failed")
	if ce.Fields["reason"] != "client_certificate_refused" || ce.Retryable {
		t.Fatalf("want reason=client_certificate_refused, not retryable: %v", err)
	}
}

func TestSecureUntrustedCAIsUnknownCA(t *testing.T) {
	s := secureFor(t)
	_, err := NewAdmin(ctxT(t), s.options("other-ca.pem", true, s.admin, s.adminToken)...)
	ce := asAuthorizationError(t, err, "tls_handshake_failed")
	if ce.Fields["reason"] != "unknown_ca" || ce.Retryable {
		t.Fatalf("want reason=unknown_ca, not retryable: %v", err)
	}
}

func TestSecureMissingPermissionIsNotAuthorizedForOperation(t *testing.T) {
	s := secureFor(t)
	ctx := ctxT(t)
	a, err := NewAdmin(ctx, s.options("ca.pem", true, s.reader, s.readerToken)...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.CreateTopic(ctx, unique("go-secure-denied"), 1)
	ce := asAuthorizationError(t, err, "NOT_AUTHORIZED_FOR_OPERATION")
	if ce.Fields["command"] != "CREATE" || ce.Fields["permission"] != "admin" {
		t.Fatalf("fields %v: %v", ce.Fields, err)
	}
}

// Options carry the token only into the library: printing them (or the
// error of a bad token) never shows it.
func TestTokenNeverPrinted(t *testing.T) {
	const secret = "printed-s3cr3t"
	opt := WithOption("token", secret)
	for _, text := range []string{fmt.Sprint(opt), fmt.Sprintf("%v %+v %#v", opt, opt, opt),
		fmt.Sprintf("%v %#v", []Option{opt}, []Option{opt})} {
		if strings.Contains(text, secret) {
			t.Fatalf("the token shows in %q", text)
		}
	}
	// A bad token value is refused before anything is sent, without quoting it.
	_, err := NewAdmin(ctxT(t), WithBootstrap(broker), WithOption("principal", "p"), WithOption("token", "two words"+secret))
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("want invalid_argument, got %v", err)
	}
	if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), secret) {
		t.Fatalf("the token shows in %v", err)
	}
}
