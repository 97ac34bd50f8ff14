//go:build ignore

// make.go drives the remessa web binary of commit 8e335f2 over HTTP to
// write the desk fixture (see README.md): an administrator, a second user,
// a second service account, and a finished carnet run on the embedded
// service. Usage: go run make.go BINARY DATA_DIR SAMPLE_XLSX
package main

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

const adminPassword = "Fixture-Admin-8e335f2"

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	csrfAttr  = regexp.MustCompile(`<main[^>]* data-csrf="([^"]+)"`)
	shown     = regexp.MustCompile(`id="nova-senha">([^<]+)</code>`)
)

type client struct {
	base string
	http *http.Client
	csrf string
}

func (c *client) do(req *http.Request) (string, *url.URL) {
	resp, err := c.http.Do(req)
	if err != nil {
		fail("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		fail("%s %s: %d\n%.800s", req.Method, req.URL, resp.StatusCode, b)
	}
	if m := csrfAttr.FindSubmatch(b); m != nil {
		c.csrf = string(m[1])
	}
	return string(b), resp.Request.URL
}

func (c *client) get(p string) (string, *url.URL) {
	req, _ := http.NewRequest("GET", c.base+p, nil)
	return c.do(req)
}

func (c *client) post(p string, form url.Values) (string, *url.URL) {
	if form == nil {
		form = url.Values{}
	}
	if form.Get("csrf") == "" {
		form.Set("csrf", c.csrf)
	}
	req, _ := http.NewRequest("POST", c.base+p, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

func (c *client) multipart(p string, fields url.Values, field, name string, data []byte) (string, *url.URL) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fields.Set("csrf", c.csrf)
	for k, vs := range fields {
		for _, v := range vs {
			w.WriteField(k, v)
		}
	}
	if field != "" {
		fw, _ := w.CreateFormFile(field, name)
		fw.Write(data)
	}
	w.Close()
	req, _ := http.NewRequest("POST", c.base+p, &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return c.do(req)
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "make: "+f+"\n", a...)
	os.Exit(1)
}

func main() {
	bin, dir, sample := os.Args[1], os.Args[2], os.Args[3]
	pwFile := filepath.Join(os.TempDir(), "fixture-admin-password")
	os.WriteFile(pwFile, []byte(adminPassword), 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail("%v", err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "web", "--addr", addr, "--data", dir, "--admin-password-file", pwFile)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fail("%v", err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	jar, _ := cookiejar.New(nil)
	c := &client{base: "http://" + addr, http: &http.Client{Jar: jar, Timeout: time.Minute}}
	for deadline := time.Now().Add(60 * time.Second); ; {
		if resp, err := http.Get(c.base + "/entrar"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			fail("the server did not start")
		}
		time.Sleep(200 * time.Millisecond)
	}
	body, _ := c.get("/entrar")
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		fail("no csrf on /entrar")
	}
	c.post("/entrar", url.Values{"usuario": {"admin"}, "senha": {adminPassword}, "csrf": {m[1]}})

	body, u := c.post("/admin/usuarios", url.Values{"usuario": {"secretaria"}, "nome": {"Secretária da Escola"}, "papel": {"operator"}})
	pw := shown.FindStringSubmatch(body)
	if pw == nil {
		fail("no password shown at %s", u)
	}
	fmt.Printf("secretaria's password: %s\n", html.UnescapeString(pw[1]))
	_, u = c.multipart("/admin/contas", url.Values{"nome": {"Loja Centro"}, "servico": {"production"},
		"base_url": {"https://cobrancas.exemplo.com.br/"}, "pix_base_url": {"https://pix.exemplo.com.br"},
		"client_id": {"Client_Id_fixture"}, "client_secret": {"Client_Secret_fixture"}}, "", "", nil)
	fmt.Printf("account: %s\n", u)

	data, err := os.ReadFile(sample)
	if err != nil {
		fail("%v", err)
	}
	_, u = c.multipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}}, "planilha", "alunos.xlsx", data)
	base := strings.TrimSuffix(u.Path, "/colunas")
	c.post(base+"/colunas", nil)
	c.post(base+"/configuracao", url.Values{"name": {"Mensalidades 2027"}, "repeats": {"2"}, "due": {"dia 10 do próximo mês"},
		"fine": {"2%"}, "interest": {"0,033%"}, "on_invalid": {"stop"}})
	c.get(base + "/plano")
	_, u = c.post(base+"/executar", nil)
	fmt.Printf("run: %s\n", u)
	for deadline := time.Now().Add(3 * time.Minute); ; {
		body, _ = c.get(u.Path)
		if strings.Contains(body, `data-status="done"`) {
			break
		}
		if time.Now().After(deadline) || strings.Contains(body, `data-status="failed"`) {
			fail("the run did not finish:\n%.2000s", body)
		}
		time.Sleep(300 * time.Millisecond)
	}
	fmt.Println("run done")
}
