package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePackage(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPageHasEveryItemWithItsDoc(t *testing.T) {
	dir := writePackage(t, `// Package p is a test package. See [Client.Send].
package p

// Limit is the largest size.
const Limit = 3

// Client sends.
type Client struct {
	// Name names it.
	Name string
}

// New makes a Client.
func New() *Client { return nil }

// Send sends one record.
func (c *Client) Send() error { return nil }

func unexported() {}
`)
	r, err := read(dir)
	if err != nil {
		t.Fatal(err)
	}
	page := string(r.page(""))
	for _, want := range []string{
		"# Package p",
		"[Client.Send](#client-send)",
		"const Limit = 3",
		"### type Client {#client}",
		"// Name names it.",
		"### func New {#new}",
		"### func (*Client) Send {#client-send}",
		"Send sends one record.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "unexported") {
		t.Errorf("the page shows an unexported function:\n%s", page)
	}
	// The package, Limit, Client, New and Client.Send.
	if r.documented != 5 || len(r.undocumented) != 0 {
		t.Errorf("documented %d, undocumented %v; want 5 and none", r.documented, r.undocumented)
	}
}

func TestUndocumentedExportedItemsAreListed(t *testing.T) {
	dir := writePackage(t, `// Package p is a test package.
package p

const (
	// A is documented.
	A = 1
	B = 2
)

type T struct{}

func (T) M() {}
`)
	r, err := read(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.page("")
	got := strings.Join(r.undocumented, ",")
	if got != "B,T,T.M" {
		t.Errorf("undocumented: %q, want B,T,T.M", got)
	}
}
