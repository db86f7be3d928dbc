package console_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/models"
	"corral/models/store"
	"corral/web/webtest"
)

// TestBrowserRefusedFormsComeBackOnAGetAddress: a refused member add,
// member removal, new flavor and flavor edit each leave Chromium on a GET
// address of the form's page, with what was typed (or ticked) and the
// error; reloading it shows the same form, not a 404 or a second post.
func TestBrowserRefusedFormsComeBackOnAGetAddress(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	b.AcceptDialogs()
	id := webtest.TestID
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	run := func(a chromedp.Action[string]) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.Ctx, stepTimeout)
		defer cancel()
		v, err := chromedp.Run(ctx, a)
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
		return v
	}
	step := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.Ctx, stepTimeout)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("browser: %v", err)
		}
	}
	// at reads the address and checks it is the page path with retry=form.
	at := func(path, form string) {
		t.Helper()
		loc := run(chromedp.Location())
		u, err := url.Parse(loc)
		if err != nil || u.Path != path || u.Query().Get("retry") != form || u.Query().Has("_csrf") {
			t.Fatalf("after the refusal the browser is at %q; want %s?retry=%s…", loc, path, form)
		}
	}
	value := func(sel chromedp.CSS) string {
		t.Helper()
		return run(chromedp.Value(sel))
	}
	ctx := context.Background()
	agg, err := app.Store.GetAggregate(ctx, "aggA")
	if err != nil {
		t.Fatal(err)
	}
	aggPath := "/aggregates/" + agg.UUID

	// Member add: an unknown name refuses the whole add.
	step(
		chromedp.Navigate(app.URL+aggPath),
		chromedp.WaitVisible(id("member-add-form")),
		chromedp.SendKeys(css(`[data-testid="member-add-form"] textarea[name="bulk"]`), "cn5 ghost"),
		chromedp.Click(id("member-add")),
		chromedp.WaitVisible(id("error-bulk")),
	)
	at(aggPath, "members")
	for _, when := range []string{"after the refusal", "after a reload"} {
		if got := b.Text(id("error-bulk")); !strings.Contains(got, "ghost") {
			t.Errorf("%s: error %q", when, got)
		}
		if got := value(css(`[data-testid="member-add-form"] textarea[name="bulk"]`)); !strings.Contains(got, "cn5") || !strings.Contains(got, "ghost") {
			t.Errorf("%s: the box holds %q, want what was typed", when, got)
		}
		step(chromedp.Reload(), chromedp.WaitVisible(id("error-bulk")))
	}

	// Member removal: someone else edits the aggregate meanwhile; the
	// refusal says so and the member stays ticked.
	step(
		chromedp.Navigate(app.URL+aggPath),
		chromedp.WaitVisible(id("member-select")),
		chromedp.Click(id("member-select")),
	)
	if _, err := app.Store.UpdateAggregate(ctx, store.Actor{Name: "other", Via: "cli"}, agg.UUID, agg.Generation, func(a *models.Aggregate) error {
		a.Metadata["colour"] = "blue"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	step(chromedp.Click(id("member-remove")), chromedp.WaitVisible(id("member-error")))
	at(aggPath, "members-remove")
	if got := b.Text(id("member-error")); !strings.Contains(got, "changed by someone else") {
		t.Errorf("removal error %q", got)
	}
	ticked, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="member-select"]').checked`))
	if err != nil || !ticked {
		t.Error("the ticked member is no longer ticked")
	}
	if cur, err := app.Store.GetAggregate(ctx, agg.UUID); err != nil || len(cur.Members) != len(agg.Members) {
		t.Errorf("members %v (%v), want %d: the refused removal removed something", cur, err, len(agg.Members))
	}

	// New flavor: a size of 0 vCPUs and a bad extra spec.
	step(
		chromedp.Navigate(app.URL+"/flavors/new"),
		chromedp.WaitVisible(id("flavor-form")),
		chromedp.SendKeys(chromedp.ID("f-name"), "f-bad"),
		chromedp.SetValue(chromedp.ID("f-vcpus"), "0"),
		chromedp.SendKeys(css(`[data-testid="specs-editor"] input[name="key"]`), "aggregate_instance_extra_specs:ram"),
		chromedp.SendKeys(css(`[data-testid="specs-editor"] input[name="value"]`), ">= lots"),
		chromedp.Click(id("flavor-submit")),
		chromedp.WaitVisible(id("error-vcpus")),
	)
	at("/flavors/new", "flavor-new")
	for _, when := range []string{"after the refusal", "after a reload"} {
		if got := value(css("#f-name")); got != "f-bad" {
			t.Errorf("%s: name %q", when, got)
		}
		if got := value(css(`[data-testid="specs-editor"] input[name="value"]`)); got != ">= lots" {
			t.Errorf("%s: spec value %q", when, got)
		}
		if got := b.Text(css(`[data-testid="specs-editor"] [data-testid="kv-error"]`)); !strings.Contains(got, "not a number") {
			t.Errorf("%s: spec error %q", when, got)
		}
		step(chromedp.Reload(), chromedp.WaitVisible(id("error-vcpus")))
	}
	if _, err := app.Store.GetFlavor(ctx, "f-bad"); err == nil {
		t.Fatal("a refused flavor was saved")
	}

	// Flavor edit: an extra spec nova would crash on.
	fl, err := app.Store.GetFlavor(ctx, "m1.small")
	if err != nil {
		t.Fatal(err)
	}
	flPath := "/flavors/" + fl.ID
	step(
		chromedp.Navigate(app.URL+flPath),
		chromedp.WaitVisible(id("flavor-form")),
		chromedp.SendKeys(css(`[data-testid="specs-editor"] input[name="key"]`), "aggregate_instance_extra_specs:x"),
		chromedp.SendKeys(css(`[data-testid="specs-editor"] input[name="value"]`), "<or>"),
		// The preview above the button says it first (and moves the
		// button down), as a person sees before clicking.
		chromedp.WaitVisible(id("inline-impact-error")),
		chromedp.Click(id("flavor-submit")),
		chromedp.WaitVisible(css(`[data-testid="specs-editor"] [data-testid="kv-error"]`)),
	)
	at(flPath, "flavor")
	step(chromedp.Reload(), chromedp.WaitVisible(css(`[data-testid="specs-editor"] [data-testid="kv-error"]`)))
	if got := b.Text(css(`[data-testid="specs-editor"] [data-testid="kv-error"]`)); !strings.Contains(got, "at least one alternative") {
		t.Errorf("after a reload: spec error %q", got)
	}
	if got := value(css(`[data-testid="specs-editor"] input[name="value"]`)); got != "<or>" {
		t.Errorf("after a reload: spec value %q", got)
	}
	if cur, _ := app.Store.GetFlavor(ctx, fl.ID); cur.Generation != fl.Generation {
		t.Error("the refused edit changed the flavor")
	}
}
