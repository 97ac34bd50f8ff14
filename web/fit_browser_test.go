package web

import (
	"context"
	"testing"
)

// browserFits fails the test for what on the page does not fit the window
// (call it at the width to check): an element reaching past the window's
// right edge (inside a frame that scrolls sideways on purpose, the sheet's
// grid, is left out), and a <select> narrower than its chosen option's
// text, which the browser then cuts ("no ve" for "no vencimento").
func browserFits(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	wide := browserEval[[]string](t, ctx, `Array.from(document.querySelectorAll("body *"))
		.filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.right > document.documentElement.clientWidth + 1 && !e.closest(".table-wrap") })
		.slice(0, 8).map(e => e.tagName.toLowerCase() + (e.name ? "[name=" + e.name + "]" : "") + (e.className ? "." + e.className : "") + " " + Math.round(e.getBoundingClientRect().right) + "px")`)
	if len(wide) > 0 {
		t.Errorf("%s at %d px: wider than the window: %q", name, browserEval[int](t, ctx, "document.documentElement.clientWidth"), wide)
	}
	// a select needs what the same select sized by its content alone
	// (its chosen option, its padding, its arrow) needs: narrower, the
	// text is cut
	cut := browserEval[[]string](t, ctx, `Array.from(document.querySelectorAll("select")).filter(s => {
			const o = s.options[s.selectedIndex]; if (!o || s.offsetParent === null) return false;
			const cs = getComputedStyle(s), k = s.cloneNode(false);
			for (const p of ["font", "padding", "border", "letterSpacing", "boxSizing"]) k.style[p] = cs[p];
			Object.assign(k.style, {width: "auto", minWidth: "0", maxWidth: "none", flex: "none", position: "absolute", visibility: "hidden"});
			k.appendChild(new Option(o.text)); document.body.appendChild(k);
			const need = k.getBoundingClientRect().width; k.remove();
			return need > s.getBoundingClientRect().width + 1 })
		.slice(0, 8).map(s => (s.name || s.id) + ": " + s.options[s.selectedIndex].text + " in " + Math.round(s.getBoundingClientRect().width) + "px")`)
	if len(cut) > 0 {
		t.Errorf("%s at %d px: selects too narrow for their choice: %q", name, browserEval[int](t, ctx, "document.documentElement.clientWidth"), cut)
	}
}

// browserFitsAt is browserFits in a window width px wide; the window is
// 1280 px wide again afterwards.
func browserFitsAt(t testing.TB, ctx context.Context, width int64, name string) {
	t.Helper()
	browserViewport(t, ctx, width)
	browserFits(t, ctx, name)
	browserViewport(t, ctx, 1280)
}
