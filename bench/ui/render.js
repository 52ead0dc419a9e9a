// Renders the unified diff on stdin as a static HTML page with diff2html (line by line, its
// own stylesheet inlined), on stdout: the peer of `staged ui` in bench/ui_paint.py.
const fs = require('fs');
const path = require('path');
const { html } = require('diff2html');
const diff = fs.readFileSync(0, 'utf8');
const css = fs.readFileSync(path.join(__dirname, 'node_modules/diff2html/bundles/css/diff2html.min.css'), 'utf8');
const body = html(diff, { drawFileList: true, matching: 'none', outputFormat: 'line-by-line' });
process.stdout.write(`<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head><body>${body}</body></html>`);
