package control_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"

	"remessa/sandbox/control"
	"remessa/sandbox/module"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func moduleDeps(e *env) module.Deps {
	return module.Deps{Store: e.st, Clock: e.clk, Auth: e.auth, Notify: e.ob}
}

func doMux(h http.Handler, method, path string) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code
}

func asControlError(err error, target **control.Error) bool { return errors.As(err, target) }
