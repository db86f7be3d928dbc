// Package static holds the console's stylesheet and vendored JavaScript,
// embedded into the binary so that corral ships as one file and serves no
// asset from a CDN.
package static

import "embed"

// FS holds css/ and vendor/; web serves it under /static/.
//
//go:embed css vendor
var FS embed.FS

// HTMX is the path of the vendored htmx build under /static/.
const HTMX = "/static/vendor/htmx-2.0.11.min.js"

// CSS is the path of the console stylesheet under /static/.
const CSS = "/static/css/corral.css"
