import { escapeHtml } from "./escape.ts";

/**
 * The page shell: one inline stylesheet, no scripts, no web fonts, no CDN (autoscan often runs without internet).
 * Readable on a phone (fluid card, 16 px inputs so iOS does not zoom), light and dark.
 */
export function renderLayout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)} · autoscan</title>
<style>${STYLE}</style>
</head>
<body>
<main class="card">
<header><p class="brand">autoscan</p><h1>${escapeHtml(title)}</h1></header>
${body}
</main>
</body>
</html>
`;
}

const STYLE = `
:root{--bg:#f3f4f6;--card:#fff;--text:#111827;--muted:#6b7280;--line:#e5e7eb;--accent:#e5a00d;--accent-text:#1f1600;
--ok:#047857;--ok-bg:#ecfdf5;--warn:#92400e;--warn-bg:#fffbeb;--err:#b91c1c;--err-bg:#fef2f2;--code:#f3f4f6}
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--card:#181b21;--text:#e5e7eb;--muted:#9ca3af;--line:#2a2f38;
--ok:#34d399;--ok-bg:#0b2a20;--warn:#fbbf24;--warn-bg:#2b2110;--err:#f87171;--err-bg:#2c1414;--code:#0f1115}}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;background:var(--bg);color:var(--text);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;padding:max(16px,env(safe-area-inset-top)) 16px 32px}
.card{max-width:40rem;margin:0 auto;background:var(--card);border:1px solid var(--line);border-radius:14px;padding:20px 20px 16px;
box-shadow:0 1px 2px rgb(0 0 0/.05),0 8px 24px rgb(0 0 0/.06)}
@media (min-width:640px){body{padding-top:48px}.card{padding:28px 32px 20px}}
header{margin-bottom:16px}
.brand{margin:0;font-size:.8rem;font-weight:700;letter-spacing:.08em;text-transform:uppercase;color:var(--accent)}
h1{margin:.1rem 0 0;font-size:1.5rem;line-height:1.25}
h2{margin:0 0 .4rem;font-size:1.05rem}
label{display:block;font-weight:600;margin-bottom:6px}
input[type=text]{display:block;width:100%;font:inherit;font-size:16px;padding:12px 14px;border:1px solid var(--line);border-radius:10px;
background:var(--bg);color:var(--text);font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
input[type=text]:focus{outline:2px solid var(--accent);outline-offset:1px;border-color:transparent}
.hint{margin:8px 0 16px;color:var(--muted);font-size:.9rem}
button{display:block;width:100%;font:inherit;font-weight:700;padding:12px 18px;border:0;border-radius:10px;background:var(--accent);
color:var(--accent-text);cursor:pointer;min-height:48px}
button:hover{filter:brightness(1.05)}button:focus-visible{outline:2px solid var(--text);outline-offset:2px}
@media (min-width:640px){button{width:auto;min-width:9rem}}
.result{border-radius:10px;padding:14px 16px;margin:0 0 20px;border:1px solid}
.result.ok{background:var(--ok-bg);border-color:var(--ok);}.result.ok h2{color:var(--ok)}
.result.warn{background:var(--warn-bg);border-color:var(--warn)}.result.warn h2{color:var(--warn)}
.result.err{background:var(--err-bg);border-color:var(--err)}.result.err h2{color:var(--err)}
.result p{margin:.2rem 0}
.result .lead{margin:.1rem 0 .6rem}
dl{margin:.4rem 0 0;display:grid;grid-template-columns:max-content 1fr;gap:4px 12px}
dt{color:var(--muted);font-size:.9rem}dd{margin:0;min-width:0}
@media (max-width:420px){dl{grid-template-columns:1fr}dd{margin-bottom:6px}}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;background:var(--code);border:1px solid var(--line);
border-radius:6px;padding:1px 6px;overflow-wrap:anywhere;-webkit-box-decoration-break:clone;box-decoration-break:clone}
dd code{display:inline-block;max-width:100%;line-height:1.4;padding:2px 8px}
.cmd{display:block;margin-top:4px;padding:8px 10px;white-space:pre-wrap;line-height:1.45}
footer{margin-top:20px;padding-top:12px;border-top:1px solid var(--line);color:var(--muted);font-size:.85rem}
footer p{margin:.25rem 0}
`;
