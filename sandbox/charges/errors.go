package charges

import (
	"fmt"
	"net/http"

	"remessa/sandbox/httpx"
)

// Error is a refusal of the charges API: HTTP status, the 7-digit code,
// the error slug and a description that is either a string or a
// httpx.PropertyError (JSON pointer and message).
type Error struct {
	Status int
	Code   int
	Slug   string
	Desc   any
}

func (e *Error) Error() string {
	switch d := e.Desc.(type) {
	case httpx.PropertyError:
		return fmt.Sprintf("%d %s: %s: %s", e.Code, e.Slug, d.Property, d.Message)
	default:
		return fmt.Sprintf("%d %s: %v", e.Code, e.Slug, d)
	}
}

// write answers the error in the charges API dialect.
func (e *Error) write(w http.ResponseWriter) {
	httpx.V1Error(w, e.Status, e.Code, e.Slug, e.Desc)
}

// Error codes answered by the module. Codes marked "real" are the real
// service's (real-service.md §1.5, service-spec Errors); the others were
// chosen by the sandbox (35009xx) and are listed in docs/charges-api.md.
const (
	CodeInvalidAccount     = 3500008            // real: unknown payee_code in tokenization (HTTP 401)
	CodeNotFound           = 3500010            // real: property_does_not_exists (unknown id)
	CodeTokenUsed          = 3500018            // real: payment_token already used
	CodeRequired           = 3500023            // real: required property missing (resend e-mail)
	CodeDuplicatePayee     = 3500026            // real: same payee_code twice in one item
	CodeRepasses           = 3500029            // real: "Erro ao mapear repasses"
	CodeAlreadyPaymentForm = 3500030            // real: payment method already set
	CodeValidation         = 3500034            // real: validation_error
	CodeOnlyWaitingUnpaid  = 3500038            // real: only waiting/unpaid can be updated
	CodeMinRepeats         = 3500041            // real: repeats must be at least 2
	CodeCancel             = 3500043            // real: only new/link/waiting/unpaid can be canceled
	CodeCannotPay          = 3500044            // real: cannot pay/link in this status
	CodeInvalidBrand       = 3500056            // real: invalid_brand
	CodeResend             = 3500066            // real: only waiting can be re-sent
	CodeSettle             = 3500069            // real: only new/waiting/unpaid can be settled
	CodeDiscountSplit      = 3500073            // real: no discount on a marketplace charge
	CodeCarnetFinished     = 3500083            // real: the carnet is finished
	CodeBelongsToCarnet    = 3500085            // real: the charge belongs to a carnet
	CodeUpdateParcels      = 3500101            // real: update_parcels
	CodeMinTotal           = 4600036            // real: total below R$ 5,00
	CodeMaxRepeats         = 4600059            // real: at most 12 parcels
	CodeDueTooFar          = 4600414            // real: due date too far in the future
	CodeLinkNotUpdatable   = 3500901            // sandbox: payment link can no longer be updated
	CodeInvalidToken       = 3500902            // sandbox: payment_token unknown for this account
	CodeRefund             = 3500903            // sandbox: refund precondition
	CodeRetry              = 3500904            // sandbox: retry only for refused card charges
	CodeInstallments       = 3500905            // sandbox: installment count not offered
	CodeWrittenOff         = 3500906            // sandbox: slip written off (days_to_write_off passed)
	CodeInternal           = httpx.InternalCode // real: internal error (HTTP 500)
)

func errf(code int, slug, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Slug: slug, Desc: fmt.Sprintf(format, args...)}
}

// invalid is a 3500034 validation_error at a JSON pointer.
func invalid(pointer, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeValidation, Slug: "validation_error",
		Desc: httpx.PropertyError{Property: pointer, Message: fmt.Sprintf(format, args...)}}
}

func required(pointer string) *Error {
	return invalid(pointer, "A propriedade é obrigatória")
}

func notFound(property, what string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeNotFound, Slug: "property_does_not_exists",
		Desc: httpx.PropertyError{Property: property, Message: what}}
}

func chargeNotFound() *Error { return notFound("id", "A cobrança informada não existe") }
func carnetNotFound() *Error { return notFound("id", "O carnê informado não existe") }
func parcelNotFound(n string) *Error {
	return notFound("parcel", fmt.Sprintf("A parcela %s não existe neste carnê", n))
}

// fromDecode maps a strict-decoding failure to 3500034 (or 413 for a body
// above the limit).
func fromDecode(de *httpx.DecodeError) *Error {
	e := invalid(de.Pointer, "%s", de.Message)
	if de.Pointer == "" {
		e.Desc = httpx.PropertyError{Property: "/", Message: de.Message}
	}
	e.Status = de.Status()
	return e
}

// errInternal is written like every other 500 of the sandbox
// (httpx.V1InternalError): same code, slug and description.
var errInternal = &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Slug: httpx.InternalSlug,
	Desc: httpx.InternalDescription}
