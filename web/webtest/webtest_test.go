package webtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// pngMagic starts every PNG file.
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// expireBrowser opens the login page in a browser whose test deadline is
// short, then waits for that deadline to pass.
func expireBrowser(t *testing.T) *Browser {
	t.Helper()
	defer func(d time.Duration) { Timeout = d }(Timeout)
	Timeout = 5 * time.Second
	app := Start(t)
	b := NewBrowser(t, app)
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(app.URL+"/login"), chromedp.WaitVisible(TestID("login-form"))); err != nil {
		t.Fatalf("open the login page: %v", err)
	}
	<-b.Ctx.Done()
	// The test's context is spent: every action on it fails now.
	if err := chromedp.Do(b.Ctx, chromedp.WaitVisible(TestID("login-form"))); !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		t.Fatalf("an action after the deadline returned %v", err)
	}
	return b
}

func TestScreenshotAfterDeadline(t *testing.T) {
	b := expireBrowser(t)
	path, err := b.Screenshot("expired")
	if err != nil {
		t.Fatalf("screenshot after the deadline: %v", err)
	}
	t.Cleanup(func() { os.Remove(path) })
	png, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, pngMagic) || len(png) < 1000 {
		t.Errorf("%s is not a page screenshot (%d bytes)", path, len(png))
	}
	if !strings.HasPrefix(path, ScreenshotDir()) || !strings.Contains(filepath.Base(path), "TestScreenshotAfterDeadline-expired-") {
		t.Errorf("screenshot saved as %s", path)
	}
}

// failOnPurposeEnv makes TestDeliberateFailureAfterDeadline run: it fails
// on purpose, so only TestFailureScreenshotSurvivesDeadline runs it, in a
// child process.
const failOnPurposeEnv = "CORRAL_WEBTEST_FAIL_ON_PURPOSE"

func TestDeliberateFailureAfterDeadline(t *testing.T) {
	if os.Getenv(failOnPurposeEnv) == "" {
		t.Skip("fails on purpose; run by TestFailureScreenshotSurvivesDeadline")
	}
	expireBrowser(t)
	t.Error("failing on purpose after the browser deadline")
}

// A test that fails after its browser deadline ran out still leaves a
// failure screenshot: run such a test in a child process (with its own
// temporary directory) and look for the file it names.
func TestFailureScreenshotSurvivesDeadline(t *testing.T) {
	if ChromiumPath() == "" {
		t.Skip("webtest: Chromium not found")
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeliberateFailureAfterDeadline$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), failOnPurposeEnv+"=1", "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the child test should fail, got %v:\n%s", err, out)
	}
	if !strings.Contains(string(out), "failing on purpose") {
		t.Fatalf("the child test did not reach its failure:\n%s", out)
	}
	m := regexp.MustCompile(`failure screenshot saved to (\S+\.png)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no failure screenshot reported:\n%s", out)
	}
	path := string(m[1])
	if !strings.HasPrefix(path, filepath.Join(tmp, "corral-screenshots")+string(filepath.Separator)) {
		t.Errorf("screenshot %s is outside the child's temporary directory %s", path, tmp)
	}
	png, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reported screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, pngMagic) {
		t.Errorf("%s is not a PNG", path)
	}
}
